import { sql, type Kysely, type RawBuilder } from "kysely";
import { REINDEX_TAG_PREFIX } from "../job.js";

/**
 * Every SQL statement that starts from tether.dead_job lives here (parking and sweeping, which
 * move rows in from tether.job, are in ./job-store.ts).
 */

type Db = Kysely<any>;

export type DeadReason = "parked" | "expired";

export interface DeadJobRow {
  id: string;
  job_id: string;
  name: string;
  tag: string;
  priority: number;
  kwargs: unknown;
  attempts: number;
  last_error: string | null;
  reason: DeadReason;
  enqueued_at: Date;
  dead_at: Date;
}

/** Which dead-letter rows a statement applies to; every field is optional (absent = any). */
export interface DeadJobSelection {
  reason?: DeadReason | undefined;
  name?: string | undefined;
  ids?: readonly string[] | undefined;
}

function where(f: DeadJobSelection): RawBuilder<unknown> {
  return sql`(${f.reason === undefined ? sql`true` : sql`d.reason = ${f.reason}`})
    AND (${f.name === undefined ? sql`true` : sql`d.name = ${f.name}`})
    AND (${f.ids === undefined ? sql`true` : sql`d.id = ANY(${[...f.ids]}::bigint[])`})`;
}

/** The newest `limit` rows of the selection and how many it holds in total. */
export async function selectDeadJobs(db: Db, f: DeadJobSelection, limit: number): Promise<{ total: number; rows: DeadJobRow[] }> {
  const [rows, count] = await Promise.all([
    sql<DeadJobRow>`
      SELECT d.id, d.job_id, d.name, d.tag, d.priority, d.kwargs, d.attempts, d.last_error, d.reason, d.enqueued_at, d.dead_at
      FROM tether.dead_job d WHERE ${where(f)}
      ORDER BY d.dead_at DESC, d.id DESC LIMIT ${limit}`.execute(db),
    sql<{ n: string }>`SELECT count(*) AS n FROM tether.dead_job d WHERE ${where(f)}`.execute(db),
  ]);
  return { total: Number(count.rows[0]?.n ?? 0), rows: rows.rows };
}

/**
 * Moves the selection back into tether.job in one statement: due now, a fresh expiry (the
 * column default), attempts reset, the last error and the original enqueued_at kept. The retry
 * is recorded in the entity's history at the moment it happened (an "enqueued" event of the new
 * job, bulk re-index work aside): the job keeps its first enqueued_at, so neither the pending
 * job nor the drainer's batch row could say when, or that, it was retried.
 */
export async function requeueDeadJobs(db: Db, f: DeadJobSelection): Promise<number> {
  const r = await sql<{ n: string }>`
    WITH moved AS (
      DELETE FROM tether.dead_job d WHERE ${where(f)}
      RETURNING d.name, d.enqueued_at, d.priority, d.tag, d.kwargs, d.last_error
    ), requeued AS (
      INSERT INTO tether.job (name, enqueued_at, priority, tag, kwargs, attempts, last_error)
      SELECT name, enqueued_at, priority, tag, kwargs, 0, last_error FROM moved
      RETURNING id, name, tag, priority, kwargs
    ), recorded AS (
      INSERT INTO tether.entity_event (name, entity_id, kind, job_id, tag, priority, detail)
      SELECT name, kwargs->>'id', 'enqueued', id, tag, priority, 'retried from the dead-letter table'
      FROM requeued WHERE kwargs ? 'id' AND NOT starts_with(tag, ${REINDEX_TAG_PREFIX})
    )
    SELECT count(*) AS n FROM requeued`.execute(db);
  return Number(r.rows[0]?.n ?? 0);
}

export interface DeadJobGroupAggregate {
  dim: "name" | "tag" | "priority" | "all";
  key: string | null;
  parked: number;
  expired: number;
}

/** Parked and expired counts per name, per tag, per priority and overall, in one scan. */
export async function aggregateDeadJobs(db: Db): Promise<DeadJobGroupAggregate[]> {
  const r = await sql<{ dim: DeadJobGroupAggregate["dim"]; key: string | null; parked: string; expired: string }>`
    SELECT CASE WHEN grouping(name) = 0 THEN 'name' WHEN grouping(tag) = 0 THEN 'tag'
                WHEN grouping(priority) = 0 THEN 'priority' ELSE 'all' END AS dim,
           coalesce(name, tag, priority::text) AS key,
           count(*) FILTER (WHERE reason = 'parked') AS parked,
           count(*) FILTER (WHERE reason = 'expired') AS expired
    FROM tether.dead_job
    GROUP BY GROUPING SETS ((name), (tag), (priority), ())`.execute(db);
  return r.rows.map((x) => ({ dim: x.dim, key: x.key, parked: Number(x.parked), expired: Number(x.expired) }));
}
