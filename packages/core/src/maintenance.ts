import { sql, type Kysely } from "kysely";
import { ValidationError } from "./errors.js";
import { readQueueGauges, type QueueGauges } from "./queue-gauges.js";

/**
 * Work that must run once across N drainer replicas: sampling the queue (the history behind
 * windowed alerts and the gauges every replica exports) and pruning tether.job_stat and
 * tether.queue_sample. The leader is whoever takes a transaction-scoped advisory lock; the
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
}

export type ResolvedMaintenanceOptions = Required<MaintenanceOptions>;

/** Fills defaults and validates once. */
export function resolveMaintenanceOptions(opts: MaintenanceOptions = {}): ResolvedMaintenanceOptions {
  const o = {
    sampleIntervalMs: opts.sampleIntervalMs ?? 15_000,
    statRetentionDays: opts.statRetentionDays ?? 7,
    sampleRetentionMs: opts.sampleRetentionMs ?? 86_400_000,
    pruneLimit: opts.pruneLimit ?? 10_000,
    statementTimeoutMs: opts.statementTimeoutMs ?? 30_000,
    vacuumMinDeadTuples: opts.vacuumMinDeadTuples ?? 10_000,
  };
  for (const [k, v] of Object.entries(o)) {
    const min = k === "sampleIntervalMs" || k === "vacuumMinDeadTuples" ? 0 : 1;
    if (!Number.isFinite(v) || v < min) throw new ValidationError(k, `must be a number >= ${min}, got ${String(v)}`);
  }
  return o;
}

export interface MaintenanceResult {
  /** False when another replica held the lock: this one did nothing. */
  leader: boolean;
  /** The sample written by this pass (undefined when a recent one existed). */
  sample?: QueueGauges;
  prunedStats: number;
  prunedSamples: number;
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
  const now = opts.now ? sql`${opts.now.toISOString()}::timestamptz` : sql`now()`;
  const result = await db.transaction().execute(async (trx): Promise<MaintenanceResult> => {
    await sql`SELECT set_config('statement_timeout', ${String(o.statementTimeoutMs)}, true)`.execute(trx);
    const lock = await sql<{ got: boolean }>`SELECT pg_try_advisory_xact_lock(${MAINTENANCE_LOCK}) AS got`.execute(trx);
    if (!lock.rows[0]?.got) return { leader: false, prunedStats: 0, prunedSamples: 0 };

    let sample: QueueGauges | undefined;
    const recent = await sql<{ recent: boolean }>`
      SELECT EXISTS (SELECT 1 FROM tether.queue_sample
                     WHERE at <= ${now} AND at > ${now} - ${o.sampleIntervalMs} * interval '1 millisecond') AS recent`.execute(trx);
    if (!recent.rows[0]?.recent) {
      sample = await readQueueGauges(trx, opts.now ? { now: opts.now } : {});
      await sql`
        INSERT INTO tether.queue_sample (at, live_length, total_length, expired, parked, oldest_due_age_seconds, lanes)
        VALUES (${sample.at.toISOString()}::timestamptz, ${sample.liveLength}, ${sample.totalLength}, ${sample.expired},
                ${sample.parked}, ${sample.oldestDueAgeSeconds}, ${JSON.stringify(sample.lanes)}::jsonb)`.execute(trx);
    }

    const stats = await sql`
      DELETE FROM tether.job_stat WHERE ctid = ANY(ARRAY(
        SELECT ctid FROM tether.job_stat WHERE at < ${now} - ${o.statRetentionDays} * interval '1 day' LIMIT ${o.pruneLimit}))`.execute(trx);
    const samples = await sql`
      DELETE FROM tether.queue_sample WHERE id IN (
        SELECT id FROM tether.queue_sample WHERE at < ${now} - ${o.sampleRetentionMs} * interval '1 millisecond'
        ORDER BY at LIMIT ${o.pruneLimit})`.execute(trx);
    return {
      leader: true,
      ...(sample ? { sample } : {}),
      prunedStats: Number(stats.numAffectedRows ?? 0),
      prunedSamples: Number(samples.numAffectedRows ?? 0),
    };
  });
  if (result.leader && o.vacuumMinDeadTuples > 0 && (await needsVacuum(db, o.vacuumMinDeadTuples))) {
    // VACUUM cannot run inside a transaction; SKIP_LOCKED makes a rare second leader a no-op.
    await sql`VACUUM (SKIP_LOCKED, ANALYZE) tether.job`.execute(db);
    result.vacuumed = true;
  }
  return result;
}

async function needsVacuum(db: Kysely<any>, minDead: number): Promise<boolean> {
  const r = await sql<{ dead: string; live: string }>`
    SELECT n_dead_tup AS dead, n_live_tup AS live FROM pg_stat_user_tables
    WHERE schemaname = 'tether' AND relname = 'job'`.execute(db);
  const row = r.rows[0];
  if (!row) return false;
  return Number(row.dead) >= minDead && Number(row.dead) >= Number(row.live) / 10;
}
