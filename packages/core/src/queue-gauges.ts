import { sql, type Kysely } from "kysely";
import { REINDEX_TAG_PREFIX, type CompletionOutcome } from "./job.js";

/**
 * Read-only statistics of the queue: the figures behind /metrics gauges, `tether alerts` and
 * /admin/queue. Writes of tether.queue_sample live in ./maintenance.ts.
 */

type Db = Kysely<any>;
const at = (now: Date | undefined) => (now ? sql`${now.toISOString()}::timestamptz` : sql`now()`);

/** Outcomes that mean a job was confirmed in sync (parked and expired are failures). */
export const CONFIRMED_OUTCOMES: readonly CompletionOutcome[] = ["up_to_date", "repaired", "deleted_downstream", "forced"];

/** True for tags of live traffic; tags starting with "reindex" are admin work. */
export function isLiveTag(tag: string): boolean {
  return !tag.startsWith(REINDEX_TAG_PREFIX);
}

export interface LaneLength {
  name: string;
  tag: string;
  priority: number;
  /** Unexpired jobs, due or not. */
  length: number;
  /** Of which due now. */
  due: number;
}

export interface QueueGauges {
  /** The instant the figures describe (database clock, or the pinned `now`). */
  at: Date;
  lanes: LaneLength[];
  /** Unexpired jobs of live tags. */
  liveLength: number;
  totalLength: number;
  /** Swept to tether.dead_job plus past expires_at but not swept yet. */
  expired: number;
  parked: number;
  /**
   * How long the oldest live (non-reindex) job has been waiting for the downstream, in seconds;
   * 0 when none waits. A job never attempted waits since it became due (scheduled_at). A job
   * that failed and is backing off has had scheduled_at moved forward, so it waits since it was
   * enqueued (an over-estimate by at most the write path's grace period): a downstream outage
   * keeps this figure growing although every retry reschedules.
   */
  oldestDueAgeSeconds: number;
}

/**
 * Counts the queue now: one scan of tether.job grouped by lane, plus index lookups for expired
 * and parked jobs. Re-index lanes are counted but never feed `liveLength` or the oldest due age.
 *
 * @example
 * const g = await readQueueGauges(db);
 * console.log(g.liveLength, g.parked);
 */
export async function readQueueGauges(db: Db, opts: { now?: Date } = {}): Promise<QueueGauges> {
  const now = at(opts.now);
  const lanesQ = sql<{ name: string; tag: string; priority: number; length: string; due: string; oldest_due_age: number | null }>`
    SELECT name, tag, priority, count(*) AS length,
           count(*) FILTER (WHERE scheduled_at <= ${now}) AS due,
           extract(epoch FROM ${now} - min(CASE WHEN attempts > 0 THEN enqueued_at WHEN scheduled_at <= ${now} THEN scheduled_at END))::float8 AS oldest_due_age
    FROM tether.job WHERE expires_at > ${now}
    GROUP BY name, tag, priority
    ORDER BY name, tag, priority`.execute(db);
  const deadQ = sql<{ at: Date; expired_dead: string; expired_live: string; parked: string }>`
    SELECT ${now} AS at,
           (SELECT count(*) FROM tether.dead_job WHERE reason = 'expired') AS expired_dead,
           (SELECT count(*) FROM tether.job WHERE expires_at <= ${now}) AS expired_live,
           (SELECT count(*) FROM tether.dead_job WHERE reason = 'parked') AS parked`.execute(db);
  const [lanesR, deadR] = await Promise.all([lanesQ, deadQ]);
  const lanes = lanesR.rows.map((r) => ({ name: r.name, tag: r.tag, priority: r.priority, length: Number(r.length), due: Number(r.due) }));
  let oldest = 0;
  for (const r of lanesR.rows) if (isLiveTag(r.tag) && r.oldest_due_age !== null) oldest = Math.max(oldest, r.oldest_due_age);
  const d = deadR.rows[0]!;
  return {
    at: new Date(d.at),
    lanes,
    liveLength: lanes.filter((l) => isLiveTag(l.tag)).reduce((a, l) => a + l.length, 0),
    totalLength: lanes.reduce((a, l) => a + l.length, 0),
    expired: Number(d.expired_dead) + Number(d.expired_live),
    parked: Number(d.parked),
    oldestDueAgeSeconds: Math.max(0, oldest),
  };
}

export interface QueueSample extends QueueGauges {
  id: string;
}

/** The newest sample written by the maintenance leader, or undefined before the first one. */
export async function latestQueueSample(db: Db): Promise<QueueSample | undefined> {
  const r = await sql<{
    id: string;
    at: Date;
    live_length: string;
    total_length: string;
    expired: string;
    parked: string;
    oldest_due_age_seconds: number;
    lanes: LaneLength[];
  }>`SELECT * FROM tether.queue_sample ORDER BY at DESC, id DESC LIMIT 1`.execute(db);
  const s = r.rows[0];
  if (!s) return undefined;
  return {
    id: String(s.id),
    at: new Date(s.at),
    lanes: s.lanes,
    liveLength: Number(s.live_length),
    totalLength: Number(s.total_length),
    expired: Number(s.expired),
    parked: Number(s.parked),
    oldestDueAgeSeconds: Number(s.oldest_due_age_seconds),
  };
}

/**
 * Since when the live queue has been above `watermark` without a break, according to the
 * samples up to `now`: the first sample after the last one at or below it. Undefined when
 * the newest sample is not above it (or there is none).
 */
export async function liveQueueAboveSince(db: Db, watermark: number, opts: { now?: Date } = {}): Promise<Date | undefined> {
  const now = at(opts.now);
  const r = await sql<{ since: Date | null }>`
    SELECT min(at) AS since FROM tether.queue_sample
    WHERE at <= ${now}
      AND at > coalesce((SELECT max(at) FROM tether.queue_sample WHERE at <= ${now} AND live_length <= ${watermark}), '-infinity')`.execute(db);
  const since = r.rows[0]?.since;
  return since ? new Date(since) : undefined;
}

/**
 * Live jobs that were already queued at `before` and still are (unexpired) at `now`: a lower
 * bound of the live queue length at every instant in between, needing no samples. (Jobs moved
 * back by `retryDeadJobs` keep their enqueued_at and count as queued since then.)
 */
export async function livePersistentJobs(db: Db, before: Date, opts: { now?: Date } = {}): Promise<number> {
  const r = await sql<{ n: string }>`
    SELECT count(*) AS n FROM tether.job
    WHERE enqueued_at <= ${before.toISOString()}::timestamptz AND expires_at > ${at(opts.now)}
      AND NOT starts_with(tag, ${REINDEX_TAG_PREFIX})`.execute(db);
  return Number(r.rows[0]!.n);
}

/** Confirmed completions recorded in tether.job_stat with `since < at <= now`. */
export async function confirmedCompletions(db: Db, since: Date, opts: { now?: Date } = {}): Promise<number> {
  const r = await sql<{ n: string | null }>`
    SELECT sum(count) AS n FROM tether.job_stat
    WHERE at > ${since.toISOString()}::timestamptz AND at <= ${at(opts.now)}
      AND outcome = ANY(${[...CONFIRMED_OUTCOMES]}::text[])`.execute(db);
  return Number(r.rows[0]?.n ?? 0);
}

/**
 * Unexpired jobs of unpaused lanes that a working drainer would have confirmed by `now`: due
 * since before `dueBefore` and never attempted, or enqueued before it and failing since (their
 * backoff moved scheduled_at forward, so it cannot tell how long they have waited). Paused
 * lanes are excluded: pausing is deliberate.
 */
export async function staleDueJobs(db: Db, dueBefore: Date, opts: { now?: Date } = {}): Promise<number> {
  const before = sql`${dueBefore.toISOString()}::timestamptz`;
  const r = await sql<{ n: string }>`
    SELECT count(*) AS n FROM tether.job j
    WHERE (j.scheduled_at <= ${before} OR (j.attempts > 0 AND j.enqueued_at <= ${before}))
      AND j.expires_at > ${at(opts.now)}
      AND NOT EXISTS (SELECT 1 FROM tether.paused_name p WHERE p.name = j.name)`.execute(db);
  return Number(r.rows[0]!.n);
}

/** The database clock (so alert windows never mix the application's clock with Postgres'). */
export async function databaseNow(db: Db): Promise<Date> {
  const r = await sql<{ now: Date }>`SELECT now() AS now`.execute(db);
  return new Date(r.rows[0]!.now);
}
