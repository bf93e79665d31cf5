/**
 * The drainer process: env → Postgres (migrated) → Elasticsearch sink → daemon.
 * Run from the repo: `node --conditions=source --import tsx services/drainer/src/main.ts`.
 * SIGTERM/SIGINT: finish the current batch, close the server, Postgres and Elasticsearch, exit 0.
 */
import { createDb, migrate } from "@tether/core";
import { annotationMigrations, annotations } from "@tether/annotations";
import { ElasticsearchSink } from "@tether/elasticsearch";
import { startDrainerDaemon } from "./daemon.js";
import { loadEnv } from "./env.js";
import { createLogger, maskUrl } from "./logger.js";

const env = loadEnv();
const logger = createLogger({ level: env.LOG_LEVEL });
logger.info({ databaseUrl: maskUrl(env.DATABASE_URL), elasticsearchUrl: maskUrl(env.ELASTICSEARCH_URL), indexPrefix: env.TETHER_INDEX_PREFIX }, "starting");

const collections = [annotations];
const db = createDb({ connectionString: env.DATABASE_URL, applicationName: "tether-drainer" });
await migrate(db, [annotationMigrations]);
const sink = new ElasticsearchSink({ client: env.ELASTICSEARCH_URL, indexPrefix: env.TETHER_INDEX_PREFIX });
for (const c of collections) {
  try {
    await sink.ensureIndex(c.index, c.mappings);
  } catch (err) {
    // The loop retries Elasticsearch on every pass; jobs wait in Postgres meanwhile.
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
  maintenance: { intervalMs: env.TETHER_MAINTENANCE_INTERVAL_MS },
  drainer: {
    intervalMs: env.TETHER_DRAIN_INTERVAL_MS,
    batchSize: env.TETHER_BATCH_SIZE,
    deadlineMs: env.TETHER_DEADLINE_MS,
    maxAttempts: env.TETHER_MAX_ATTEMPTS,
  },
});

let closing = false;
for (const signal of ["SIGTERM", "SIGINT"] as const) {
  process.once(signal, () => {
    if (closing) return;
    closing = true;
    logger.info({ signal }, "shutting down after the current batch");
    void daemon
      .stop()
      .then(() => Promise.all([db.destroy(), sink.close()]))
      .then(
        () => process.exit(0),
        (err: unknown) => {
          logger.error({ err: String(err) }, "shutdown failed");
          process.exit(1);
        },
      );
  });
}
