import { sql, type Kysely } from "kysely";
import { pinnedClock as at } from "./pinned-clock.js";

/** Every SQL statement on tether.queue_sample (the queue's history, written by maintenance) lives here. */

type Db = Kysely<any>;

export interface LaneLength {
  name: string;
  tag: string;
  priority: number;
  /** Unexpired jobs, due or not. */
  length: number;
  /** Of which due now. */
  due: number;
}

/** The figures one sample records; their definitions are in docs/queue-figures.md. */
export interface QueueSampleFigures {
  at: Date;
  lanes: LaneLength[];
  liveLength: number;
  totalLength: number;
  expired: number;
  parked: number;
  oldestDueAgeSeconds: number;
  fanoutLength: number;
  fanoutOldestDueAgeSeconds: number;
}

export interface QueueSample extends QueueSampleFigures {
  id: string;
}

/** True when a sample was written within `intervalMs` before `now`. */
export async function recentQueueSampleExists(db: Db, intervalMs: number, opts: { now?: Date } = {}): Promise<boolean> {
  const now = at(opts.now);
  const r = await sql<{ recent: boolean }>`
    SELECT EXISTS (SELECT 1 FROM tether.queue_sample
                   WHERE at <= ${now} AND at > ${now} - ${intervalMs} * interval '1 millisecond') AS recent`.execute(db);
  return r.rows[0]?.recent === true;
}

export async function insertQueueSample(db: Db, s: QueueSampleFigures): Promise<void> {
  await sql`
    INSERT INTO tether.queue_sample (at, live_length, total_length, expired, parked, oldest_due_age_seconds, lanes, fanout_length, fanout_oldest_due_age_seconds)
    VALUES (${s.at.toISOString()}::timestamptz, ${s.liveLength}, ${s.totalLength}, ${s.expired},
            ${s.parked}, ${s.oldestDueAgeSeconds}, ${JSON.stringify(s.lanes)}::jsonb, ${s.fanoutLength}, ${s.fanoutOldestDueAgeSeconds})`.execute(db);
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
    fanout_length: string;
    fanout_oldest_due_age_seconds: number;
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
    fanoutLength: Number(s.fanout_length),
    fanoutOldestDueAgeSeconds: Number(s.fanout_oldest_due_age_seconds),
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

/** Deletes up to `limit` samples older than `retentionMs`, oldest first; returns how many. */
export async function pruneQueueSamples(db: Db, opts: { retentionMs: number; limit: number; now?: Date }): Promise<number> {
  const r = await sql`
    DELETE FROM tether.queue_sample WHERE id IN (
      SELECT id FROM tether.queue_sample WHERE at < ${at(opts.now)} - ${opts.retentionMs} * interval '1 millisecond'
      ORDER BY at LIMIT ${opts.limit})`.execute(db);
  return Number(r.numAffectedRows ?? 0);
}
