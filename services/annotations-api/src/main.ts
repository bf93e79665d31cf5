/**
 * The annotation API process: env + tether.config.ts → Postgres (migrated, config checked) →
 * the config's sink, given the URL of the engine TETHER_SINK names → app → listen. The admin
 * console acts on the config's collections and evaluates its alert thresholds; the config comes
 * from TETHER_CONFIG, else ./tether.config.ts.
 * Run from the repo: `node --conditions=source --import tsx services/annotations-api/src/main.ts`.
 */
import { checkConfigSchema, ConfigError, createDb, loadConfig, migrate } from "@tether/core";
import { annotationMigrations, annotations } from "@tether/annotations";
import { buildApp } from "./app.js";
import { ensureIndexInBackground } from "./ensure-index-in-background.js";
import { loadEnv } from "./env.js";
import { createLogger, maskUrl, onShutdown, packageVersion, startService, startTelemetryOrExit } from "@tether/service-kit";

const env = loadEnv();
const logger = createLogger({ service: "annotations-api", level: env.LOG_LEVEL });
// Traces and metrics over OTLP when the OTEL_* variables configure it (service.name tether-api).
const telemetry = startTelemetryOrExit("annotations-api", { serviceName: "tether-api", serviceVersion: packageVersion(new URL("../package.json", import.meta.url)), env: env.OTEL });
logger.info({ databaseUrl: maskUrl(env.DATABASE_URL), sink: env.SINK.kind, sinkConnection: env.SINK.connection, indexPrefix: env.TETHER_INDEX_PREFIX }, "starting");
function stopOnConfigError(err: unknown): never {
  if (!(err instanceof ConfigError)) throw err;
  logger.fatal({ file: err.file, field: err.field, err: err.message }, "invalid config");
  process.stderr.write(`annotations-api: ${err.message}\n`);
  process.exit(1);
}
const loaded = await loadConfig({ path: env.TETHER_CONFIG }).catch(stopOnConfigError);

// A failure here (Postgres unreachable, port in use) is one JSON log line and exit 69 or 70.
// The fatal line of a failed start names the Postgres it tried (password masked).
await startService(logger.child({ postgres: maskUrl(env.DATABASE_URL) }), async () => {
  const db = createDb({ connectionString: env.DATABASE_URL, applicationName: "tether-annotations-api", preparedStatements: env.TETHER_PREPARED_STATEMENTS });
  // The config's sink and writer options, as the CLI and the drainer read them.
  // A refused privilege names the API and the role docs/connecting.md gives it.
  const sink = loaded.config.sink({ ...env.SINK.environment, actor: { verb: "the API", role: "tether_app" } });
  // This service owns the annotation table whatever the config lists; then the config's own sets.
  await migrate(db, [annotationMigrations, ...(loaded.config.migrations ?? []).filter((m) => m.namespace !== annotationMigrations.namespace)]);
  await checkConfigSchema(db, loaded).catch(async (err: unknown) => {
    await db.destroy();
    stopOnConfigError(err);
  });
  // Writes must not wait on the engine: the index is ensured in the background, retried until it
  // answers; jobs wait in Postgres meanwhile and the drainer fills the index.
  const ensuring = ensureIndexInBackground(sink, annotations, logger);
  // A connection setting that cannot work with the node (a CA fingerprint against a node that
  // sends no CA) stops the API as a bad setting at start does: one line, exit 78.
  void startService(logger, () => ensuring.done.then(() => undefined));
  const app = await buildApp({
    db,
    sink,
    logger,
    collections: loaded.config.collections,
    options: loaded.config.options ?? {},
    ...(env.TETHER_ADMIN_TOKEN ? { adminToken: env.TETHER_ADMIN_TOKEN } : {}),
    adminTokens: env.TETHER_ADMIN_TOKENS,
    directSyncTimeoutMs: env.TETHER_DIRECT_SYNC_TIMEOUT_MS,
    graceMs: env.TETHER_GRACE_MS,
    directSync: env.TETHER_DIRECT_SYNC,
    breaker: env.TETHER_BREAKER_FAILURES === 0 ? false : { failures: env.TETHER_BREAKER_FAILURES, cooldownMs: env.TETHER_BREAKER_COOLDOWN_MS },
    bodyLimitBytes: env.TETHER_BODY_LIMIT_BYTES,
  });
  await app.listen({ port: env.PORT, host: "0.0.0.0" });
  const address = app.server.address();
  logger.info({ port: typeof address === "object" && address ? address.port : env.PORT }, "listening");

  onShutdown(logger, "shutting down", async () => {
    ensuring.stop();
    await app.close();
    await Promise.all([db.destroy(), sink.close?.(), telemetry.shutdown()]);
  });
});
