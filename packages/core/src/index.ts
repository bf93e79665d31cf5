/**
 * @tether/core — the transactional outbox and verifying reconciler, vendor- and domain-free.
 *
 * Terminology
 * - collection: a synced entity type (source table, id, version column, document builder, index).
 * - sink: the downstream store adapter (Elasticsearch), implementing `Sink`.
 * - job: a row in tether.job saying an entity may differ downstream; see ./job.ts.
 * - direct sync: the one best-effort write right after COMMIT.
 * - drainer: the reconciler that claims jobs, verifies, repairs and confirms.
 */
export * from "./alerts.js";
export * from "./backoff.js";
export * from "./collection.js";
export * from "./dead-jobs.js";
export * from "./direct-sync.js";
export * from "./drain-batch.js";
export * from "./drainer.js";
export * from "./entity-hash.js";
export * from "./entity-id.js";
export * from "./errors.js";
export * from "./job.js";
export * from "./job-store.js";
export * from "./logger.js";
export * from "./maintenance.js";
export * from "./metrics.js";
export * from "./migrations/migrate.js";
export type { Migration, MigrationSet } from "./migrations/migration.js";
export * from "./pg-error-codes.js";
export * from "./queue-gauges.js";
export * from "./queue-stats.js";
export * from "./reindex.js";
export * from "./sink.js";
export * from "./sync-plan.js";
export * from "./verify.js";
export * from "./write-path.js";
export * from "./create-db.js";
