/**
 * @tether/core — the transactional outbox and verifying reconciler, vendor- and domain-free.
 *
 * Terminology
 * - collection: a synced entity type (source table, id, version column, document builder, index).
 * - sink: the downstream store adapter (Elasticsearch), implementing `Sink`.
 * - job: a row in tether.job saying an entity may differ downstream; see ./job.ts.
 * - direct sync: the one best-effort write right after COMMIT.
 * - drainer: the reconciler that claims jobs, verifies, repairs and confirms.
 * - verification matrix: what the drainer does for each pair of Postgres and downstream states;
 *   see ./verify/verification-matrix.ts.
 *
 * Layout: write/ (the write path, re-index), drain/ (the drainer), verify/ (the matrix and
 * anti-entropy), ops/ (queue read model, alerts, maintenance, dead letters, metrics), store/
 * (every SQL statement, one module per table), migrations/.
 *
 * This entry point is the public API: what an application uses. Everything else (job-table
 * stores, the drain pipeline, instruments) is in `@tether/core/internal`, for Tether's own CLI,
 * daemon and adapters, and may change in any release.
 *
 * @packageDocumentation
 * @module @tether/core
 */
// Collections: declare a synced table once.
export type { Collection, CollectionOptions, LoadQuery, ReindexScope } from "./collection.js";
export { defineCollection } from "./define-collection.js";
export type { ColumnOf, TypedCollection, TypedCollectionOptions, TypedEmbed, TypedEmbeds, TypedReindexScope } from "./typed-collection.js";
export { embedJobTag, fanoutJobName, type EmbeddedTable, type EmbedOptions, type EmbedOwner } from "./embedded-table.js";
export { embedChangeEffect, touchedLinks, type EmbedChange, type EmbedChangeOp, type EmbedEffect } from "./fan-out-rule.js";

// One config for every process.
export {
  checkConfigSchema,
  ConfigError,
  ConnectionSettingError,
  BULK_MAX_BYTES_VARIABLE,
  connectionVariables,
  DEFAULT_MAX_BULK_BYTES,
  DEFAULT_REQUEST_TIMEOUT_MS,
  describeConnection,
  readConnectionFiles,
  resolveConnection,
  type ConnectionAuth,
  type ConnectionEnvironment,
  type ConnectionField,
  type ConnectionFiles,
  type ConnectionOptions,
  type ResolvedConnection,
  type CheckConfigSchemaOptions,
  type ConfigWarning,
  type PendingAdoption,
  DEFAULT_CONFIG_FILES,
  defineConfig,
  loadConfig,
  sinkEnvironment,
  sinkFromConfig,
  writerFromConfig,
  type LoadConfigOptions,
  type ProcessSinkEnvironment,
  type SinkKind,
  type LoadedConfig,
  type SinkEnvironment,
  type SinkFactory,
  type TetherConfig,
  type TetherOptions,
} from "./config/index.js";

// Postgres and migrations.
export { createDb, type CreateDbOptions } from "./create-db.js";
export { migrate, type MigrateResult } from "./migrations/migrate.js";
export type { Migration, MigrationSet } from "./migrations/migration.js";

// The write path.
export { createWriter, type Writer, type WriterOptions, type WriteCallOptions, type WriteResult } from "./write/write-path.js";
export type { EmbedWriteResult } from "./write/embed-writes.js";
export type { DirectSyncOutcome, EntityChange } from "./write/direct-sync.js";
export { nextVersion, raiseVersionFloor } from "./store/version-store.js";
export { CircuitBreaker, type BreakerSnapshot, type BreakerState, type CircuitBreakerOptions } from "./write/circuit-breaker.js";

// The drainer.
export { Drainer, type DrainerEvents, type DrainerOptions, type DrainResult } from "./drain/drainer.js";
export type { WriteFirstMode } from "./drain/write-first.js";
export type { DrainCounts } from "./drain/drain-batch.js";
export type { FanoutCounts } from "./drain/fan-out-pass.js";

// Re-index, verify, alerts, queue figures, maintenance.
export { enqueueReindex, type ReindexRequest, type ReindexResult } from "./write/reindex.js";
export { hasIntegerIds, verifyCollection, VerifyNeedsRebuildError, type VerifyOptions, type VerifyProgress, type VerifyReport, type VerifyWindow } from "./verify/verify-collection.js";
export { canonicalEntityId, MAX_ID_BYTES, type EntityIdType } from "./entity-id.js";
export { deepVerifyCollection, type DeepDriftKind, type DeepVerifyOptions, type DeepVerifyReport } from "./verify/deep-verify.js";
export { DRIFT_KINDS, type DriftKind } from "./verify/verification-matrix.js";
export { evaluateAlerts, type AlertName, type AlertStatus, type AlertThresholds, type AlertsReport } from "./ops/alerts.js";
export { queueStats, type DeadCounts, type FanoutInProgress, type GroupCounts, type QueueCounts, type QueueStats, type QueueStatsOptions } from "./ops/queue-read-model.js";
export { describeIndexReport, indexReadiness, type IndexReadinessOptions, type IndexReport, type IndexState } from "./ops/index-readiness.js";
export { runMaintenance, type MaintenanceOptions, type MaintenanceResult } from "./ops/maintenance.js";
export { checkVersionFloor, type VersionFloorOptions, type VersionFloorResult } from "./ops/version-floor.js";
export { rebuildIndex, type RebuildOptions, type RebuildPhase, type RebuildProgress, type RebuildResult, type RebuildState } from "./rebuild/rebuild-index.js";
export { discardRebuild, finishRebuild, rebuildStatus, rollbackRebuild } from "./rebuild/rebuild-admin.js";
export { DEFAULT_TOMBSTONE_RETENTION_MS, purgeTombstones, type CollectionPurgeResult, type PurgeTombstonesOptions } from "./ops/tombstone-purge.js";

// The sink contract, for adapters.
export type { BucketRange, BucketSummary, DownstreamState, IndexCheck, IndexLayout, MappingProblem, Sink, SinkCallOptions, SinkItemResult, SinkItemStatus, SinkOperation, ScannedDocument, TombstonePurgeResult } from "./sink.js";
export { entityHash } from "./verify/entity-hash.js";
export { entityKey } from "./verify/entity-key.js";
export { contentHash } from "./verify/content-hash.js";

// Errors: each has a stable `code`.
export { DeadlineExceededError, NotFoundError, PermanentSinkError, RetryableSinkError, TetherError, ValidationError } from "./errors.js";
export { permissionDenied, SinkPermissionError, type RefusalActor, type SinkRefusal } from "./sink-refusal.js";
export type { Logger } from "./logger.js";

// Capturing writes that bypass the writer, and adopting an existing table.
export { captureSql, captureStatus, disableCapture, enableCapture, type CaptureSql, type CaptureStatus } from "./capture/capture-store.js";
export { type CaptureOptions } from "./capture/capture-options.js";
export { adoptCollection, type AdoptOptions, type AdoptPhase, type AdoptProgress, type AdoptResult } from "./adopt/adopt.js";
export { adoptMigrations, type AdoptMigrationsOptions } from "./adopt/adopt-migrations.js";
