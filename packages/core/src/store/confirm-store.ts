import { sql, type Kysely } from "kysely";
import { REINDEX_TAG_PREFIX, type CompletionOutcome } from "../job.js";
import type { CompletionCount } from "./job-stat-store.js";
import { arrayLiteral } from "./array-literal.js";

type Db = Kysely<any>;

/** What a drain pass confirmed, to record in one statement. */
export interface Confirmation {
  /** Confirmed job ids, each with how it ended. */
  confirmed: ReadonlyMap<string, CompletionOutcome>;
  /** Where the claim found each confirmed job (`JobRow.tid`), in any order. */
  tids: readonly string[];
  /** Completion counts of the pass (confirmed and parked), appended to tether.job_stat. */
  stats: readonly CompletionCount[];
  /** Record the confirmed jobs in the trace history (tether.entity_event_batch). */
  events: boolean;
}

/** The trace's word for each way a job was confirmed. */
const EVENT_KIND = { up_to_date: "synced", repaired: "repaired", forced: "forced", deleted_downstream: "deleted" } as const;

/**
 * Deletes the confirmed jobs, appends the pass's completion counts and, per lane, one trace row
 * holding every confirmed job in arrays (taken from the deleted rows themselves): the whole
 * ledger of a clean pass in ONE round trip. A bulk re-index job that found its document current
 * says nothing about the entity and is left out of the trace (its repairs are kept).
 * Returns how many jobs were deleted.
 *
 * Most jobs of a pass are "synced": only the others travel with their kind. The arrays of a
 * trace row are aggregated in one pass over the deleted rows, so position i of each describes
 * the same job without sorting any of them. A job an embedded table's change enqueued keeps
 * where it came from (its kwargs.via) at its position of the row's `vias`; a pass that confirmed
 * none stores NULL there.
 */
export async function confirmJobs(db: Db, c: Confirmation): Promise<number> {
  const ids: string[] = [];
  const otherIds: string[] = [];
  const otherKinds: string[] = [];
  for (const [id, outcome] of c.confirmed) {
    ids.push(id);
    if (outcome === "up_to_date") continue;
    const kind = EVENT_KIND[outcome as keyof typeof EVENT_KIND] ?? outcome;
    otherIds.push(id);
    otherKinds.push(kind);
  }
  const stats = c.stats.filter((s) => s.count > 0);
  const statInsert = stats.length
    ? sql`, stat AS (
        INSERT INTO tether.job_stat (name, tag, priority, outcome, count)
        SELECT * FROM unnest(${stats.map((s) => s.name)}::text[], ${stats.map((s) => s.tag)}::text[],
                             ${stats.map((s) => s.priority)}::int[], ${stats.map((s) => s.outcome)}::text[],
                             ${stats.map((s) => s.count)}::int[]))`
    : sql``;
  const eventInsert = c.events
    ? sql`, ev AS (
        INSERT INTO tether.entity_event_batch (name, entity_ids, job_ids, kinds, tags, priorities, enqueued_at, vias)
        SELECT d.name, array_agg(d.entity_id), array_agg(d.id), array_agg(coalesce(u.kind, 'synced')),
               array_agg(d.tag), array_agg(d.priority), array_agg(d.enqueued_at),
               CASE WHEN count(d.via) > 0 THEN array_agg(d.via) END
        FROM d LEFT JOIN unnest(${arrayLiteral(otherIds)}::bigint[], ${arrayLiteral(otherKinds)}::text[]) AS u(id, kind) ON u.id = d.id
        WHERE d.entity_id IS NOT NULL AND NOT (u.kind IS NULL AND starts_with(d.tag, ${REINDEX_TAG_PREFIX}))
        GROUP BY d.name)`
    : sql``;
  if (ids.length === 0 && stats.length === 0) return 0;
  const r = await sql<{ n: string }>`
    WITH d AS (
      -- Found by where the claim found them (no index lookup per job), and only if they are still
      -- the confirmed ids: a job whose row moved is kept for a later pass, never another deleted.
      DELETE FROM tether.job WHERE ctid = ANY(${arrayLiteral(c.tids)}::tid[]) AND id = ANY(${arrayLiteral(ids)}::bigint[])
      RETURNING id, name, kwargs->>'id' AS entity_id, tag, priority, enqueued_at${c.events ? sql`, kwargs->'via' AS via` : sql``}
    )${statInsert}${eventInsert}
    SELECT count(*) AS n FROM d`.execute(db);
  return Number(r.rows[0]?.n ?? 0);
}
