/**
 * `@tether/core/internal`: the pieces Tether's own CLI, daemon, adapters and tests share beyond
 * the public API (job-table stores, the drain pipeline, instruments, option resolution). No
 * stability promise: an application imports `@tether/core`.
 *
 * @packageDocumentation
 * @module @tether/core/internal
 */
export * from "./index.js";
export * from "./collection.js";
export * from "./define-collection.js";
export * from "./embedded-table.js";
export * from "./sql-identifier.js";
export * from "./create-db.js";
// The mark of the writer's per-write statements, for tests of createDb's preparedStatements.
export { PREPARE_MARK } from "./store/preparing-client.js";
export * from "./errors.js";
export * from "./sink.js";
export * from "./text-value.js";
export * from "./timestamp-bound.js";
export * from "./migrations/migrate.js";
export * from "./write/reindex.js";
export * from "./write/write-path.js";
export * from "./entity-id.js";
// The engines TETHER_SINK may name, for the services' environment parsing.
export { SINK_KINDS, SINK_URL_VARIABLES } from "./config/sink-environment.js";
export * from "./job.js";
export * from "./logger.js";
export * from "./pg-error-codes.js";
export * from "./postgres-tls-problem.js";
export * from "./write/direct-sync.js";
export * from "./drain/backoff.js";
export * from "./drain/drain-batch.js";
export * from "./drain/batch-context.js";
export * from "./drain/drainer.js";
// The expansion of fan-out jobs on its own, as the benchmarks measure it.
export * from "./drain/fan-out-pass.js";
export * from "./verify/entity-hash.js";
export * from "./verify/verification-matrix.js";
export * from "./write/version-rule.js";
export * from "./verify/verify-collection.js";
export * from "./ops/alerts.js";
export { ALERT_NAMES, ALERT_SUMMARIES } from "./ops/alert-types.js";
// The entity trace, for the admin console and `tether trace`.
export * from "./ops/entity-trace.js";
export * from "./ops/dead-jobs.js";
export * from "./ops/lane-name.js";
export * from "./ops/maintenance.js";
export * from "./ops/version-floor.js";
export * from "./ops/restore-alert.js";
export * from "./store/version-floor-store.js";
export * from "./ops/metrics.js";
export * from "./ops/queue-read-model.js";
export { idColumnType, loadRows } from "./store/collection-store.js";
export { claimBatch, claimJobs, commonLastErrors, deleteJobs, insertJobs, jobTableExists, livePersistentJobs, msUntilNextDue, parkJobs, rescheduleJobs, staleDueJobs, sweepExpired } from "./store/job-store.js";
export type { ClaimOptions, Park, Reschedule } from "./store/job-store.js";
export { CONFIRMED_OUTCOMES, confirmedCompletions, recordCompletions } from "./store/job-stat-store.js";
export type { CompletionCount } from "./store/job-stat-store.js";
export { pauseName, pausedNames, resumeName } from "./store/paused-lane-store.js";
export { latestQueueSample, liveQueueAboveSince } from "./store/queue-sample-store.js";
export type { QueueSample } from "./store/queue-sample-store.js";
export { databaseNow, pingDatabase } from "./store/session-store.js";
export * from "./store/audit-log-store.js";
export * from "./store/console-session-store.js";
export * from "./store/dead-job-admin-store.js";
export * from "./store/drainer-heartbeat-store.js";
export * from "./store/entity-event-store.js";
export * from "./store/entity-row-store.js";
export { documentFanouts, fanoutProgress, type DocumentFanouts, type FanoutReaching, type PendingEmbedChange, type ReachedLink } from "./store/fanout-progress-store.js";
export * from "./store/queue-overview-store.js";
export * from "./store/queued-job-store.js";
export * from "./store/verify-run-store.js";
export * from "./store/verify-schedule-store.js";
export * from "./verify/verify-scheduler.js";
export * from "./verify/verify-key-readiness.js";
export * from "./verify/verify-schedule.js";
export * from "./ops/drainer-heartbeat.js";
export * from "./resolve-options.js";
export * from "./config/index.js";
export * from "./capture/capture-options.js";
export * from "./capture/capture-store.js";
export * from "./adopt/adopt.js";
export * from "./wake/wake-store.js";
export * from "./wake/wake-listener.js";
export * from "./adopt/adopt-migrations.js";
