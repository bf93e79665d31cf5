import { sql, type Kysely, type RawBuilder } from "kysely";
import type { DeadJob, DeadJobFilter } from "../ops/dead-jobs.js";

/** Operator statements on tether.dead_job beyond list/retry: a keyset-paginated list and discard. */

function where(f: DeadJobFilter & { tag?: string; entityId?: string }, ids?: readonly string[]): RawBuilder<unknown> {
  return sql`(${f.reason === undefined ? sql`true` : sql`d.reason = ${f.reason}`})
    AND (${f.name === undefined ? sql`true` : sql`d.name = ${f.name}`})
    AND (${f.tag === undefined ? sql`true` : sql`d.tag = ${f.tag}`})
    AND (${f.entityId === undefined ? sql`true` : sql`d.kwargs->>'id' = ${f.entityId}`})
    AND (${ids === undefined ? sql`true` : sql`d.id = ANY(${[...ids]}::bigint[])`})`;
}

/** Newest first; `before` is the last id of the previous page. */
export async function listDeadJobsPage(db: Kysely<any>, f: DeadJobFilter & { tag?: string; entityId?: string; before?: string; limit: number }): Promise<(DeadJob & { entityId: string | null })[]> {
  const r = await sql<{ id: string; job_id: string; name: string; tag: string; priority: number; kwargs: unknown; attempts: number; last_error: string | null; reason: "parked" | "expired"; enqueued_at: Date; dead_at: Date; entity_id: string | null }>`
    SELECT d.id, d.job_id, d.name, d.tag, d.priority, d.kwargs, d.attempts, d.last_error, d.reason, d.enqueued_at, d.dead_at, d.kwargs->>'id' AS entity_id
    FROM tether.dead_job d WHERE ${where(f)} AND (${f.before === undefined ? sql`true` : sql`d.id < ${f.before}::bigint`})
    ORDER BY d.id DESC LIMIT ${f.limit}`.execute(db);
  return r.rows.map((x) => ({
    id: String(x.id),
    jobId: String(x.job_id),
    name: x.name,
    tag: x.tag,
    priority: x.priority,
    kwargs: x.kwargs,
    attempts: x.attempts,
    lastError: x.last_error,
    reason: x.reason,
    enqueuedAt: x.enqueued_at.toISOString(),
    deadAt: x.dead_at.toISOString(),
    entityId: x.entity_id,
  }));
}

/**
 * Deletes dead-letter rows for good (by ids, or all matching the filter), recording a
 * "discarded" event per entity. The entity may still differ downstream: `verify` finds it.
 */
export async function discardDeadJobs(db: Kysely<any>, f: DeadJobFilter, ids?: readonly string[]): Promise<number> {
  const r = await sql<{ n: string }>`
    WITH gone AS (DELETE FROM tether.dead_job d WHERE ${where(f, ids)} RETURNING d.job_id, d.name, d.tag, d.priority, d.kwargs),
    ev AS (
      INSERT INTO tether.entity_event (name, entity_id, kind, job_id, tag, priority, detail)
      SELECT name, kwargs->>'id', 'discarded', job_id, tag, priority, 'discarded by an operator' FROM gone WHERE kwargs ? 'id'
    )
    SELECT count(*) AS n FROM gone`.execute(db);
  return Number(r.rows[0]?.n ?? 0);
}
