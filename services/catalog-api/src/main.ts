/**
 * The catalog API process: env + catalog.config.ts → Postgres (migrated, config checked) →
 * the config's sink → app → listen.
 * Run from the repo: `node --conditions=source --import tsx services/catalog-api/src/main.ts`.
 */
import { fileURLToPath } from "node:url";
import { checkConfigSchema, ConfigError, createDb, describeIndexReport, indexReadiness, loadConfig, migrate } from "@tether/core";
import { createLogger, maskUrl, onShutdown, startService } from "@tether/service-kit";
import type { Kysely } from "kysely";
import { buildApp } from "./app.js";
import type { CatalogDB } from "./catalog-db.js";
import { loadEnv } from "./env.js";
import { products } from "./product-collection.js";

const env = loadEnv();
const logger = createLogger({ service: "catalog-api", level: env.LOG_LEVEL });
logger.info({ databaseUrl: maskUrl(env.DATABASE_URL), sink: env.SINK.kind, sinkConnection: env.SINK.connection, indexPrefix: env.TETHER_INDEX_PREFIX }, "starting");
function stopOnConfigError(err: unknown): never {
  if (!(err instanceof ConfigError)) throw err;
  logger.fatal({ file: err.file, field: err.field, err: err.message }, "invalid config");
  process.stderr.write(`catalog-api: ${err.message}\n`);
  process.exit(1);
}
const configPath = env.TETHER_CONFIG ?? fileURLToPath(new URL("../catalog.config.ts", import.meta.url));
const loaded = await loadConfig({ path: configPath }).catch(stopOnConfigError);

// The fatal line of a failed start names the Postgres it tried (password masked).
await startService(logger.child({ postgres: maskUrl(env.DATABASE_URL) }), async () => {
  const db = createDb({ connectionString: env.DATABASE_URL, applicationName: "catalog-api" }) as Kysely<CatalogDB>;
  // The config's sink and writer options, as the CLI and the drainer read them.
  // A refused privilege names the API and the role docs/connecting.md gives it.
  const sink = loaded.config.sink({ ...env.SINK.environment, actor: { verb: "the catalog API", role: "tether_app" } });
  await migrate(db, loaded.config.migrations ?? []);
  await checkConfigSchema(db, loaded).catch(async (err: unknown) => {
    await db.destroy();
    stopOnConfigError(err);
  });
  // As `tether migrate` does: created behind its alias with the declared mapping when missing.
  // Writes keep working while Elasticsearch is down; the drainer fills the index later.
  for (const report of await indexReadiness(sink, [products], { create: true, call: { timeoutMs: 10_000 } })) {
    if (report.fix || report.state === "unreachable" || report.state === "forbidden") logger.warn({ index: report.index, state: report.state, problems: report.problems, fix: report.fix }, describeIndexReport(report));
  }
  const app = await buildApp({
    db,
    sink,
    logger,
    options: loaded.config.options ?? {},
    ...(env.CATALOG_ADMIN_TOKEN ? { adminToken: env.CATALOG_ADMIN_TOKEN } : {}),
    directSyncTimeoutMs: env.TETHER_DIRECT_SYNC_TIMEOUT_MS,
    graceMs: env.TETHER_GRACE_MS,
  });
  await app.listen({ port: env.PORT, host: "0.0.0.0" });
  const address = app.server.address();
  logger.info({ port: typeof address === "object" && address ? address.port : env.PORT }, "listening");
  onShutdown(logger, "shutting down", async () => {
    await app.close();
    await Promise.all([db.destroy(), sink.close?.()]);
  });
});
