import { sql, type Kysely } from "kysely";

/** The console overview's reads: completion-rate and queue-length series (lane counts come from the queue read model). */

export interface CompletionBucket {
  /** Start of the bucket. */
  at: string;
  name: string;
  /** Confirmed jobs (up to date, repaired, deleted downstream, forced). */
  confirmed: number;
  parked: number;
  expired: number;
}

/** Completions per lane in buckets of `bucketSeconds` over the last `minutes`, oldest first. */
export async function completionBuckets(db: Kysely<any>, minutes: number, bucketSeconds: number): Promise<CompletionBucket[]> {
  const r = await sql<{ at: Date; name: string; confirmed: string; parked: string; expired: string }>`
    SELECT to_timestamp(floor(extract(epoch FROM at) / ${bucketSeconds}) * ${bucketSeconds}) AS at, name,
           coalesce(sum(count) FILTER (WHERE outcome NOT IN ('parked', 'expired')), 0) AS confirmed,
           coalesce(sum(count) FILTER (WHERE outcome = 'parked'), 0) AS parked,
           coalesce(sum(count) FILTER (WHERE outcome = 'expired'), 0) AS expired
    FROM tether.job_stat WHERE at > now() - ${minutes} * interval '1 minute'
    GROUP BY 1, 2 ORDER BY 1, 2`.execute(db);
  return r.rows.map((x) => ({ at: x.at.toISOString(), name: x.name, confirmed: Number(x.confirmed), parked: Number(x.parked), expired: Number(x.expired) }));
}

export interface QueueLengthPoint {
  at: string;
  liveLength: number;
  totalLength: number;
  fanoutLength: number;
  parked: number;
  expired: number;
}

/** The maintenance samples of the last `minutes`, oldest first (at most `limit`). */
export async function queueLengthSeries(db: Kysely<any>, minutes: number, limit: number): Promise<QueueLengthPoint[]> {
  const r = await sql<{ at: Date; live_length: string; total_length: string; fanout_length: string; parked: string; expired: string }>`
    SELECT at, live_length, total_length, fanout_length, parked, expired FROM (
      SELECT * FROM tether.queue_sample WHERE at > now() - ${minutes} * interval '1 minute' ORDER BY at DESC LIMIT ${limit}) s
    ORDER BY at`.execute(db);
  return r.rows.map((x) => ({ at: x.at.toISOString(), liveLength: Number(x.live_length), totalLength: Number(x.total_length), fanoutLength: Number(x.fanout_length), parked: Number(x.parked), expired: Number(x.expired) }));
}
