#!/usr/bin/env node
/**
 * `tether-drainer`: env + tether.config.ts → Postgres (migrated, config checked) → the config's sink, given
 * the connection variables of the engine TETHER_SINK names (ELASTICSEARCH_* or OPENSEARCH_*) → daemon.
 * The config comes from `--config <file>`, else TETHER_CONFIG, else ./tether.config.ts; this
 * process names no collection itself. A config error stops it at start (exit 1) with a message
 * naming the file and the field.
 * Run from the repo: `node --conditions=source --import tsx services/drainer/src/main.ts`.
 * SIGTERM/SIGINT: finish the current batch, close the server, Postgres and the sink, exit 0.
 */
import { parseArgs } from "node:util";
import { checkConfigSchema, ConfigError, createDb, describeIndexReport, indexReadiness, loadConfig, migrate, type LoadedConfig } from "@tether/core";
import { createLogger, maskUrl, onShutdown, packageVersion, startService, startTelemetryOrExit } from "@tether/service-kit";
import { startDrainerDaemon } from "./daemon.js";
import { drainerSettings } from "./drainer-settings.js";
import { loadEnv } from "./env.js";

const args = parseArgs({ options: { config: { type: "string" } }, strict: true }).values;
const env = loadEnv();
const logger = createLogger({ service: "drainer", level: env.LOG_LEVEL });
const version = packageVersion(new URL("../package.json", import.meta.url)) ?? "unknown";
// Traces and metrics over OTLP when the OTEL_* variables configure it (service.name tether-drainer).
const telemetry = startTelemetryOrExit("drainer", { serviceName: "tether-drainer", serviceVersion: version, env: env.OTEL });

function stopOnConfigError(err: unknown): never {
  if (!(err instanceof ConfigError)) throw err;
  logger.fatal({ file: err.file, field: err.field, err: err.message }, "invalid config");
  process.stderr.write(`tether-drainer: ${err.message}\n`);
  process.exit(1);
}

const loaded: LoadedConfig = await loadConfig({ path: args.config ?? env.TETHER_CONFIG }).catch(stopOnConfigError);
const { config } = loaded;
logger.info(
  { config: loaded.file, databaseUrl: maskUrl(env.DATABASE_URL), sink: env.SINK.kind, sinkConnection: env.SINK.connection, indexPrefix: env.TETHER_INDEX_PREFIX },
  "starting",
);

// A failure here (Postgres unreachable, port in use) is one JSON log line and exit 69 or 70;
// a config that does not match Postgres exits 1 naming the file and the field.
// The fatal line of a failed start names the Postgres it tried (password masked).
await startService(logger.child({ postgres: maskUrl(env.DATABASE_URL) }), async () => {
  const db = createDb({ connectionString: env.DATABASE_URL, applicationName: "tether-drainer" });
  await migrate(db, config.migrations ?? []);
  // A table that only needs `tether adopt` does not stop the daemon: no job of its collection
  // can exist before adoption adds the version column, and once adopted its jobs are served
  // like any other (adopt's NOTIFY wakes this loop), without a restart.
  const needsAdoption = await checkConfigSchema(db, loaded, {
    pendingAdoption: "report",
    // What works but will cost (a fan-out whose chunks scan a table for want of an index): said once, at start.
    onWarning: (w) => logger.warn({ config: w.file, field: w.field }, w.message),
  }).catch(async (err: unknown) => {
    await db.destroy();
    stopOnConfigError(err);
  });
  for (const p of needsAdoption) logger.warn({ collection: p.collection, table: p.table, missing: p.missing, command: p.command }, "collection needs adopting; served once adopted");
  // The config's factory decides the connection with the environment's (docs/connecting.md).
  // A refused privilege names the drainer and the role docs/connecting.md gives it.
  const sink = config.sink({ ...env.SINK.environment, actor: { verb: "the drainer", role: "tether_drainer" } });
  // Like `tether migrate`: Tether creates a missing index behind its alias with the declared
  // mapping (writes never let the engine create one), and says which mapping differs and the fix.
  // An engine that does not answer is not fatal: the loop retries it, jobs wait in Postgres.
  for (const report of await indexReadiness(sink, config.collections, { create: true, call: { timeoutMs: 10_000 } })) {
    if (report.fix || report.state === "unreachable" || report.state === "forbidden") logger.warn({ index: report.index, collection: report.collection, state: report.state, problems: report.problems, fix: report.fix }, describeIndexReport(report));
    else logger.info({ index: report.index, collection: report.collection, state: report.state }, describeIndexReport(report));
  }

  const settings = drainerSettings(config.options ?? {}, env);
  const daemon = startDrainerDaemon({
    db,
    sink,
    collections: config.collections,
    logger,
    port: env.METRICS_PORT,
    telemetry,
    heartbeat: { version },
    ...settings,
    drainer: {
      ...settings.drainer,
      // Due-now work wakes the loop at once; TETHER_LISTEN=false (e.g. behind transaction-mode PgBouncer) keeps the interval alone.
      ...(env.TETHER_LISTEN ? { listen: { connectionString: env.TETHER_LISTEN_DATABASE_URL, applicationName: "tether-drainer-listen" } } : {}),
    },
  });
  // Registered in the same tick as the start, before the daemon says "listening": a SIGTERM from
  // then on (a deploy that stops it at once) is a graceful stop, not the signal's default death.
  onShutdown(logger, "shutting down after the current batch", async () => {
    await (await daemon.catch(() => undefined))?.stop();
    await Promise.all([db.destroy(), sink.close?.()]);
  });
  await daemon;
});
