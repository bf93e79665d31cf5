import type { Kysely } from "kysely";
import { resolveOptions, type OptionDefaults } from "../resolve-options.js";
import { jobTableTuples, vacuumJobTable } from "../store/job-store.js";
import { pruneJobStats } from "../store/job-stat-store.js";
import { pruneAheadStats } from "../store/version-floor-store.js";
import { insertQueueSample, pruneQueueSamples, recentQueueSampleExists } from "../store/queue-sample-store.js";
import { setStatementTimeout, tryAdvisoryXactLock } from "../store/session-store.js";
import { pruneHeartbeats } from "../store/drainer-heartbeat-store.js";
import { pruneEntityEvents } from "../store/entity-event-store.js";
import { pruneEmbedChanges } from "../store/embed-store.js";
import { readQueueGauges, type QueueGauges } from "./queue-read-model.js";

/**
 * Work that must run once across N drainer replicas: sampling the queue (the history behind
 * windowed alerts and the gauges every replica exports) and pruning tether.job_stat,
 * tether.queue_sample, the trace history and the finished changes of embedded tables
 * (tether.embed_change). The leader is whoever takes a transaction-scoped advisory lock; the
 * others skip. The lock lives and dies with one short transaction, so a replica killed
 * mid-pass never leaves a stale leader behind.
 */

/** Advisory-lock key of the maintenance leader (distinct from the migration lock). */
export const MAINTENANCE_LOCK = 0x7e74_4d41;

export interface MaintenanceOptions {
  /**
   * Minimum spacing of queue samples across all replicas: a pass that finds a newer sample
   * writes none. Bounds the table to one row per interval however many replicas run.
   * Default 15000 ms.
   */
  sampleIntervalMs?: number;
  /** Completion counts (tether.job_stat) older than this are deleted. Default 7 days. */
  statRetentionDays?: number;
  /** Queue samples older than this are deleted; keep it above every alert window. Default 1 day. */
  sampleRetentionMs?: number;
  /** Rows deleted per table per pass, so one pass stays short after a long outage. Default 10000. */
  pruneLimit?: number;
  /** statement_timeout of the maintenance transaction. Default 30000 ms. */
  statementTimeoutMs?: number;
  /**
   * The leader VACUUMs tether.job when it holds at least this many dead tuples (and at least a
   * tenth of its live ones): every confirmed job leaves one, and a queue table that is not
   * vacuumed slows every claim. Matters where autovacuum is off or lags. 0 disables. Default 10000.
   */
  vacuumMinDeadTuples?: number;
  /** Entity events (the console's trace history) older than this are deleted. Default 3 days. */
  eventRetentionMs?: number;
  /** Newest events kept per entity; older ones of recently active entities are deleted. Default 100. */
  eventsPerEntity?: number;
  /**
   * Changes of embedded tables whose fan-out finished (tether.embed_change rows with nothing left
   * to expand) older than this are deleted. While kept, `tether verify` finds a document an
   * expansion skipped (its version below the change's); keep it above the interval between two
   * verify runs. A pending change is never pruned. Default 7 days.
   */
  fanoutChangeRetentionMs?: number;
}

export type ResolvedMaintenanceOptions = Required<MaintenanceOptions>;

/** The defaults documented on `MaintenanceOptions`, and how each value is validated. */
export const MAINTENANCE_DEFAULTS: OptionDefaults<MaintenanceOptions> = {
  sampleIntervalMs: [15_000, "non-negative number"],
  statRetentionDays: [7, "positive number"],
  sampleRetentionMs: [86_400_000, "positive number"],
  pruneLimit: [10_000, "positive integer"],
  statementTimeoutMs: [30_000, "positive integer"],
  vacuumMinDeadTuples: [10_000, "non-negative integer"],
  eventRetentionMs: [3 * 86_400_000, "positive number"],
  eventsPerEntity: [100, "positive integer"],
  fanoutChangeRetentionMs: [7 * 86_400_000, "positive number"],
};

/** Fills defaults and validates once. */
export function resolveMaintenanceOptions(opts: MaintenanceOptions = {}): ResolvedMaintenanceOptions {
  return resolveOptions(MAINTENANCE_DEFAULTS, opts);
}

export interface MaintenanceResult {
  /** False when another replica held the lock: this one did nothing. */
  leader: boolean;
  /** The sample written by this pass (undefined when a recent one existed). */
  sample?: QueueGauges;
  prunedStats: number;
  prunedSamples: number;
  /** Entity events deleted (by age, or beyond the per-entity bound). */
  prunedEvents?: number;
  /** Finished changes of embedded tables deleted (older than `fanoutChangeRetentionMs`). */
  prunedFanoutChanges?: number;
  /** True when this pass vacuumed tether.job. */
  vacuumed?: boolean;
}

/**
 * One maintenance pass. Safe to call from every replica on every drain pass.
 *
 * @example
 * const r = await runMaintenance(db, { sampleIntervalMs: 15_000 });
 * if (r.leader && r.sample) console.log(r.sample.liveLength);
 */
export async function runMaintenance(db: Kysely<any>, opts: MaintenanceOptions & { now?: Date } = {}): Promise<MaintenanceResult> {
  const o = resolveMaintenanceOptions(opts);
  const pinned = opts.now ? { now: opts.now } : {};
  const result = await db.transaction().execute(async (trx): Promise<MaintenanceResult> => {
    await setStatementTimeout(trx, o.statementTimeoutMs);
    if (!(await tryAdvisoryXactLock(trx, MAINTENANCE_LOCK))) return { leader: false, prunedStats: 0, prunedSamples: 0 };

    let sample: QueueGauges | undefined;
    if (!(await recentQueueSampleExists(trx, o.sampleIntervalMs, pinned))) {
      sample = await readQueueGauges(trx, pinned);
      await insertQueueSample(trx, sample);
    }
    const prunedStats = await pruneJobStats(trx, { retentionDays: o.statRetentionDays, limit: o.pruneLimit, ...pinned });
    // Documents found ahead of their rows (restore_detected) are kept as long as completion counts.
    await pruneAheadStats(trx, { retentionDays: o.statRetentionDays, limit: o.pruneLimit, ...pinned });
    const prunedSamples = await pruneQueueSamples(trx, { retentionMs: o.sampleRetentionMs, limit: o.pruneLimit, ...pinned });
    // Entities written to since twice the sample interval ago (at least a minute) may have
    // gone over the per-entity bound; older ones were checked by an earlier pass.
    const prunedEvents = await pruneEntityEvents(trx, {
      retentionMs: o.eventRetentionMs,
      perEntity: o.eventsPerEntity,
      recentMs: Math.max(60_000, 2 * o.sampleIntervalMs),
      limit: o.pruneLimit,
    });
    const prunedFanoutChanges = await pruneEmbedChanges(trx, o.fanoutChangeRetentionMs, o.pruneLimit);
    await pruneHeartbeats(trx, 7 * 86_400);
    return { leader: true, ...(sample ? { sample } : {}), prunedStats, prunedSamples, prunedEvents, prunedFanoutChanges };
  });
  if (result.leader && o.vacuumMinDeadTuples > 0 && (await needsVacuum(db, o.vacuumMinDeadTuples))) {
    await vacuumJobTable(db);
    result.vacuumed = true;
  }
  return result;
}

/** Every confirmed job leaves a dead tuple: vacuum once they are many, and a tenth of the live ones. */
async function needsVacuum(db: Kysely<any>, minDead: number): Promise<boolean> {
  const t = await jobTableTuples(db);
  return t !== undefined && t.dead >= minDead && t.dead >= t.live / 10;
}
