import { sql, type Kysely, type RawBuilder } from "kysely";
import type { EmbedVia } from "../job.js";

/** Operator statements on the live job table (listing, cancelling, reprioritizing). */

export type QueuedJobState = "due" | "future" | "expired";

export interface QueuedJobFilter {
  name?: string;
  tag?: string;
  priority?: number;
  /** kwargs.id */
  entityId?: string;
  state?: QueuedJobState;
}

export interface QueuedJob {
  id: string;
  name: string;
  tag: string;
  priority: number;
  entityId: string | null;
  force: boolean;
  /** Set when a change of an embedded table enqueued it: which row of which table, and which fan-out. */
  via: EmbedVia | null;
  attempts: number;
  lastError: string | null;
  enqueuedAt: string;
  scheduledAt: string;
  expiresAt: string;
  state: QueuedJobState;
}

function where(f: QueuedJobFilter, ids?: readonly string[]): RawBuilder<unknown> {
  const state =
    f.state === "due" ? sql`j.scheduled_at <= now() AND j.expires_at > now()`
    : f.state === "future" ? sql`j.scheduled_at > now() AND j.expires_at > now()`
    : f.state === "expired" ? sql`j.expires_at <= now()`
    : sql`true`;
  return sql`(${f.name === undefined ? sql`true` : sql`j.name = ${f.name}`})
    AND (${f.tag === undefined ? sql`true` : sql`j.tag = ${f.tag}`})
    AND (${f.priority === undefined ? sql`true` : sql`j.priority = ${f.priority}`})
    AND (${f.entityId === undefined ? sql`true` : sql`j.kwargs->>'id' = ${f.entityId}`})
    AND (${state})
    AND (${ids === undefined ? sql`true` : sql`j.id = ANY(${[...ids]}::bigint[])`})`;
}

/** Jobs in enqueue (id) order, keyset-paginated: `after` is the last id of the previous page. */
export async function listQueuedJobs(db: Kysely<any>, f: QueuedJobFilter & { after?: string; limit: number }): Promise<QueuedJob[]> {
  const r = await sql<{
    id: string; name: string; tag: string; priority: number; entity_id: string | null; force: boolean; via: EmbedVia | null; attempts: number; last_error: string | null;
    enqueued_at: Date; scheduled_at: Date; expires_at: Date; state: QueuedJobState;
  }>`
    SELECT j.id, j.name, j.tag, j.priority, j.kwargs->>'id' AS entity_id, coalesce(j.kwargs->>'force' = 'true', false) AS force, j.kwargs->'via' AS via,
           j.attempts, j.last_error, j.enqueued_at, j.scheduled_at, j.expires_at,
           CASE WHEN j.expires_at <= now() THEN 'expired' WHEN j.scheduled_at <= now() THEN 'due' ELSE 'future' END AS state
    FROM tether.job j
    WHERE ${where(f)} AND (${f.after === undefined ? sql`true` : sql`j.id > ${f.after}::bigint`})
    ORDER BY j.id LIMIT ${f.limit}`.execute(db);
  return r.rows.map((x) => ({
    id: String(x.id),
    name: x.name,
    tag: x.tag,
    priority: x.priority,
    entityId: x.entity_id,
    force: x.force,
    via: x.via ?? null,
    attempts: x.attempts,
    lastError: x.last_error,
    enqueuedAt: x.enqueued_at.toISOString(),
    scheduledAt: x.scheduled_at.toISOString(),
    expiresAt: x.expires_at.toISOString(),
    state: x.state,
  }));
}

/**
 * Deletes jobs (by ids, or every job matching the filter) and records a "cancelled" event per
 * entity. Rows a drainer holds right now are skipped (SKIP LOCKED), never waited for.
 */
export async function cancelQueuedJobs(db: Kysely<any>, f: QueuedJobFilter, ids?: readonly string[]): Promise<number> {
  const r = await sql<{ n: string }>`
    WITH gone AS (
      DELETE FROM tether.job WHERE id IN (SELECT j.id FROM tether.job j WHERE ${where(f, ids)} FOR UPDATE SKIP LOCKED)
      RETURNING id, name, tag, priority, kwargs
    ), ev AS (
      INSERT INTO tether.entity_event (name, entity_id, kind, job_id, tag, priority, detail)
      SELECT name, kwargs->>'id', 'cancelled', id, tag, priority, 'cancelled by an operator' FROM gone WHERE kwargs ? 'id'
    )
    SELECT count(*) AS n FROM gone`.execute(db);
  return Number(r.rows[0]?.n ?? 0);
}

/** Sets the priority of jobs (by ids, or every job matching the filter). */
export async function reprioritizeQueuedJobs(db: Kysely<any>, f: QueuedJobFilter, priority: number, ids?: readonly string[]): Promise<number> {
  const r = await sql<{ n: string }>`
    WITH moved AS (
      UPDATE tether.job SET priority = ${priority}
      WHERE id IN (SELECT j.id FROM tether.job j WHERE ${where(f, ids)} FOR UPDATE SKIP LOCKED)
      RETURNING id, name, tag, kwargs
    ), ev AS (
      INSERT INTO tether.entity_event (name, entity_id, kind, job_id, tag, priority, detail)
      SELECT name, kwargs->>'id', 'reprioritized', id, tag, ${priority}, ${`priority set to ${priority}`} FROM moved WHERE kwargs ? 'id'
    )
    SELECT count(*) AS n FROM moved`.execute(db);
  return Number(r.rows[0]?.n ?? 0);
}

/** Of `ids`, those with a job of `name` still in tether.job (due or not): a job describes them. */
export async function idsWithQueuedJobs(db: Kysely<any>, name: string, ids: readonly string[]): Promise<Set<string>> {
  if (ids.length === 0) return new Set();
  const r = await sql<{ id: string }>`SELECT DISTINCT kwargs->>'id' AS id FROM tether.job WHERE name = ${name} AND kwargs->>'id' = ANY(${[...ids]}::text[])`.execute(db);
  return new Set(r.rows.map((x) => x.id));
}
