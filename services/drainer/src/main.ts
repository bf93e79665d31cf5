/**
 * The drainer process: env → Postgres (migrated) → sink (Elasticsearch or OpenSearch, TETHER_SINK) → daemon.
 * Run from the repo: `node --conditions=source --import tsx services/drainer/src/main.ts`.
 * SIGTERM/SIGINT: finish the current batch, close the server, Postgres and the sink, exit 0.
 */
import { readFileSync } from "node:fs";
import { createDb, migrate } from "@tether/core";
import { annotationMigrations, annotations } from "@tether/annotations";
import { startDrainerDaemon } from "./daemon.js";
import { loadEnv } from "./env.js";
import { createLogger, createSink, maskUrl, onShutdown, startService } from "@tether/service-kit";

const env = loadEnv();
const logger = createLogger({ service: "drainer", level: env.LOG_LEVEL });
logger.info({ databaseUrl: maskUrl(env.DATABASE_URL), sink: env.SINK.kind, sinkUrl: maskUrl(env.SINK.url), indexPrefix: env.TETHER_INDEX_PREFIX }, "starting");

const collections = [annotations];
// A failure here (Postgres unreachable, port in use) is one JSON log line and exit 69 or 70.
await startService(logger, async () => {
  const db = createDb({ connectionString: env.DATABASE_URL, applicationName: "tether-drainer" });
  const sink = await createSink(env.SINK, { indexPrefix: env.TETHER_INDEX_PREFIX });
  await migrate(db, [annotationMigrations]);
  for (const c of collections) {
    try {
      await sink.ensureIndex(c.index, c.mappings);
    } catch (err) {
      // The loop retries the sink on every pass; jobs wait in Postgres meanwhile.
      logger.warn({ err: String(err), index: c.index }, "could not ensure index; continuing");
    }
  }

  const daemon = await startDrainerDaemon({
    db,
    sink,
    collections,
    logger,
    port: env.METRICS_PORT,
    tracesExporter: env.OTEL_TRACES_EXPORTER,
    heartbeat: { version: (JSON.parse(readFileSync(new URL("../package.json", import.meta.url), "utf8")) as { version: string }).version },
    maintenance: { intervalMs: env.TETHER_MAINTENANCE_INTERVAL_MS },
    drainer: {
      intervalMs: env.TETHER_DRAIN_INTERVAL_MS,
      batchSize: env.TETHER_BATCH_SIZE,
      concurrency: env.TETHER_DRAIN_CONCURRENCY,
      deadlineMs: env.TETHER_DEADLINE_MS,
      maxAttempts: env.TETHER_MAX_ATTEMPTS,
      // Due-now work wakes the loop at once; TETHER_LISTEN=false (e.g. behind transaction-mode PgBouncer) keeps the interval alone.
      ...(env.TETHER_LISTEN ? { listen: { connectionString: env.TETHER_LISTEN_DATABASE_URL, applicationName: "tether-drainer-listen" } } : {}),
    },
  });

  onShutdown(logger, "shutting down after the current batch", async () => {
    await daemon.stop();
    await Promise.all([db.destroy(), sink.close()]);
  });
});
