import type { Kysely } from "kysely";
import pino from "pino";
import {
  checkConfigSchema,
  ConnectionSettingError,
  createDb,
  loadConfig,
  type Collection,
  type LoadedConfig,
  type Logger,
  type MigrationSet,
  type Sink,
  type TetherOptions,
} from "@tether/core";
import { createLogger, sinkSetting } from "@tether/service-kit/lite";
import { cliActor } from "./cli-actor.js";
import { UsageError } from "./cli-errors.js";
import { loadCliEnv } from "./env.js";

export interface CliContext {
  db: Kysely<any>;
  /** Built by the config's sink factory with the URL of the engine TETHER_SINK names and TETHER_INDEX_PREFIX. */
  sink: Sink;
  collections: readonly Collection<any>[];
  /** Application migrations applied after tether's own by `tether migrate`. */
  migrations: readonly MigrationSet[];
  /** The config's `options` block ({} when it has none). */
  options: TetherOptions;
  /** The loaded config and the file it came from (for messages that name it). */
  config: LoadedConfig;
  logger: Logger;
  close(): Promise<void>;
}

export interface CliContextOptions {
  /** The config file (`--config`). Default: TETHER_CONFIG, else ./tether.config.ts. */
  config?: string;
  /**
   * Check the config's tables and columns against Postgres before the verb runs. Default true;
   * `tether migrate` checks after migrating instead, since it creates them.
   */
  checkSchema?: boolean;
}

/**
 * Opens what a verb needs: the config (`--config`, TETHER_CONFIG or ./tether.config.ts), checked
 * against Postgres, a pool on DATABASE_URL and the config's sink, handed the connection variables
 * of the engine TETHER_SINK names (ELASTICSEARCH_* or OPENSEARCH_*; docs/connecting.md). The pool connects on first use;
 * `close()` releases the pool and the sink. A config error throws `ConfigError`.
 *
 * @example
 * const ctx = await openCliContext({ config: opts.config });
 * try { … } finally { await ctx.close(); }
 */
export async function openCliContext(opts: CliContextOptions = {}): Promise<CliContext> {
  const env = loadCliEnv();
  const loaded = await loadConfig({ path: opts.config ?? env.TETHER_CONFIG });
  if (!env.DATABASE_URL) throw new UsageError("DATABASE_URL is not set");
  const { config } = loaded;
  // The services' redacting logger: a driver's error quoting a connection string keeps no credential.
  const logger = createLogger({ service: "tether-cli", level: env.LOG_LEVEL, destination: pino.destination(2) });
  const db = createDb({ connectionString: env.DATABASE_URL, max: 4, applicationName: "tether-cli" });
  let sink: Sink;
  try {
    // The engine's connection variables as every process reads them; the config's factory decides
    // them with its own options (a bad or contradictory one is a ConnectionSettingError: exit 2).
    const setting = sinkSetting({ ...env.source, ELASTICSEARCH_URL: env.ELASTICSEARCH_URL, OPENSEARCH_URL: env.OPENSEARCH_URL });
    // A refused privilege names the verb and the role docs/connecting.md gives it.
    sink = config.sink({ ...setting.environment, actor: cliActor() });
  } catch (err) {
    await db.destroy();
    throw err instanceof ConnectionSettingError ? err : new UsageError((err as Error).message);
  }
  const close = async () => {
    await Promise.allSettled([db.destroy(), sink.close?.()]);
  };
  try {
    if (opts.checkSchema !== false) await checkConfigSchema(db, loaded);
  } catch (err) {
    await close();
    throw err;
  }
  return {
    db,
    sink,
    collections: config.collections,
    migrations: config.migrations ?? [],
    options: config.options ?? {},
    config: loaded,
    logger,
    close,
  };
}
