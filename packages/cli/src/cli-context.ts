import { isAbsolute, resolve } from "node:path";
import { pathToFileURL } from "node:url";
import type { Kysely } from "kysely";
import pino from "pino";
import { createDb, type Collection, type Logger, type MigrationSet } from "@tether/core";
import type { EngineSink } from "@tether/search-sink";
import { createSink, sinkSetting } from "@tether/service-kit";
import { UsageError } from "./cli-errors.js";
import { loadCliEnv } from "./env.js";

export interface CliContext {
  db: Kysely<any>;
  /** The sink TETHER_SINK names (Elasticsearch by default, or OpenSearch). */
  sink: EngineSink;
  collections: Collection<any>[];
  /** Application migrations applied after tether's own by `tether migrate`. */
  migrations: MigrationSet[];
  logger: Logger;
  close(): Promise<void>;
}

export interface CliContextOptions {
  /** A JS/TS module exporting `collections` (and optionally `migrations`). Default: @tether/annotations. */
  config?: string;
}

interface ConfigModule {
  collections?: unknown;
  migrations?: unknown;
}

async function loadConfig(config: string | undefined): Promise<{ collections: Collection<any>[]; migrations: MigrationSet[] }> {
  if (!config) {
    const { annotations, annotationMigrations } = await import("@tether/annotations");
    return { collections: [annotations], migrations: [annotationMigrations] };
  }
  const url = pathToFileURL(isAbsolute(config) ? config : resolve(process.cwd(), config)).href;
  let mod: ConfigModule;
  try {
    mod = (await import(url)) as ConfigModule;
  } catch (err) {
    throw new UsageError(`cannot load --config ${config}: ${err instanceof Error ? err.message : String(err)}`);
  }
  const collections = mod.collections;
  if (!Array.isArray(collections) || collections.length === 0) throw new UsageError(`--config ${config} must export a non-empty "collections" array`);
  const migrations = mod.migrations ?? [];
  if (!Array.isArray(migrations)) throw new UsageError(`--config ${config}: "migrations" must be an array of migration sets`);
  return { collections: collections as Collection<any>[], migrations: migrations as MigrationSet[] };
}

/**
 * Opens what a verb needs from the environment (DATABASE_URL, TETHER_SINK and ELASTICSEARCH_URL
 * or OPENSEARCH_URL, TETHER_INDEX_PREFIX) and the collections of `--config` (default: the annotations domain).
 * Nothing connects until first used; `close()` releases the pool and the client.
 *
 * @example
 * const ctx = await openCliContext({ config: opts.config });
 * try { … } finally { await ctx.close(); }
 */
export async function openCliContext(opts: CliContextOptions = {}): Promise<CliContext> {
  const env = loadCliEnv();
  if (!env.DATABASE_URL) throw new UsageError("DATABASE_URL is not set");
  const { collections, migrations } = await loadConfig(opts.config);
  const logger = pino({ level: env.LOG_LEVEL, base: { service: "tether-cli" } }, pino.destination(2));
  const db = createDb({ connectionString: env.DATABASE_URL, max: 4, applicationName: "tether-cli" });
  let setting;
  try {
    setting = sinkSetting(env);
  } catch (err) {
    throw new UsageError((err as Error).message);
  }
  const sink = await createSink(setting, { indexPrefix: env.TETHER_INDEX_PREFIX });
  return {
    db,
    sink,
    collections,
    migrations,
    logger,
    async close() {
      await Promise.allSettled([db.destroy(), sink.close()]);
    },
  };
}
