/**
 * The annotation API process: env → Postgres (migrated) → sink (Elasticsearch or OpenSearch, TETHER_SINK) → app → listen.
 * Run from the repo: `node --conditions=source --import tsx services/annotations-api/src/main.ts`.
 */
import { createDb, migrate } from "@tether/core";
import { annotationMigrations, annotations } from "@tether/annotations";
import { buildApp } from "./app.js";
import { loadEnv } from "./env.js";
import { createLogger, createSink, maskUrl, onShutdown, startService, startTracing } from "@tether/service-kit";

const env = loadEnv();
const logger = createLogger({ service: "annotations-api", level: env.LOG_LEVEL });
const tracing = startTracing(env.OTEL_TRACES_EXPORTER);
logger.info({ databaseUrl: maskUrl(env.DATABASE_URL), sink: env.SINK.kind, sinkUrl: maskUrl(env.SINK.url), indexPrefix: env.TETHER_INDEX_PREFIX }, "starting");

// A failure here (Postgres unreachable, port in use) is one JSON log line and exit 69 or 70.
await startService(logger, async () => {
  const db = createDb({ connectionString: env.DATABASE_URL, applicationName: "tether-annotations-api" });
  const sink = await createSink(env.SINK, { indexPrefix: env.TETHER_INDEX_PREFIX });
  await migrate(db, [annotationMigrations]);
  try {
    await sink.ensureIndex(annotations.index, annotations.mappings);
  } catch (err) {
    // Writes must keep working while the sink is down; the drainer fills the index later.
    logger.warn({ err: String(err) }, "could not ensure the annotations index; continuing");
  }
  const app = await buildApp({
    db,
    sink,
    logger,
    ...(env.TETHER_ADMIN_TOKEN ? { adminToken: env.TETHER_ADMIN_TOKEN } : {}),
    adminTokens: env.TETHER_ADMIN_TOKENS,
    directSyncTimeoutMs: env.TETHER_DIRECT_SYNC_TIMEOUT_MS,
    graceMs: env.TETHER_GRACE_MS,
    bodyLimitBytes: env.TETHER_BODY_LIMIT_BYTES,
  });
  await app.listen({ port: env.PORT, host: "0.0.0.0" });
  const address = app.server.address();
  logger.info({ port: typeof address === "object" && address ? address.port : env.PORT }, "listening");

  onShutdown(logger, "shutting down", async () => {
    await app.close();
    await Promise.all([db.destroy(), sink.close(), tracing.shutdown()]);
  });
});
