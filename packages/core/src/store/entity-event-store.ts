import { sql, type Kysely, type RawBuilder } from "kysely";
import { REINDEX_TAG_PREFIX, type EmbedVia } from "../job.js";

/**
 * Every SQL statement on tether.entity_event and tether.entity_event_batch lives here, but the
 * drainer's batch insert (ridden along with its confirming DELETE, see confirm-store.ts) and
 * the operators' events (ridden along with their own statements). The triggers are in the
 * migrations.
 */

export type EntityEventKind = "enqueued" | "synced" | "repaired" | "forced" | "deleted" | "parked" | "expired" | "cancelled" | "discarded" | "reprioritized";

export interface EntityEvent {
  id: string;
  at: string;
  kind: EntityEventKind;
  jobId: string | null;
  tag: string | null;
  priority: number | null;
  detail: string | null;
  /** Where the job came from when a change of an embedded table enqueued it (its kwargs.via, kept by the drainer's batch row). */
  via: EmbedVia | null;
}

/** Whether an event row already records this job's enqueue (a retry from the dead-letter table), at the moment it happened. */
const enqueueRecorded = (name: string, entityId: string, jobId: RawBuilder<unknown>) =>
  sql<boolean>`EXISTS (SELECT 1 FROM tether.entity_event r WHERE r.name = ${name} AND r.entity_id = ${entityId} AND r.kind = 'enqueued' AND r.job_id = ${jobId})`;

/**
 * The newest events of one entity, newest first, from the three places its history lives: the
 * event rows (parked, expired, operator actions), the drainer's batch rows (each confirmed job:
 * when it was enqueued and how it ended), and the jobs still pending (enqueued, bulk re-index
 * work aside; a job whose enqueue an event row records, a retry, is not told twice). Event ids say where an event comes from: `<n>` an event row, `b<batch>.<i>` a
 * batch row's job i (`…e` its enqueue), `j<job>` a pending job. A job that a change of an
 * embedded table enqueued carries its via on both its events (from the job, or the batch row's `vias`).
 */
export async function listEntityEvents(db: Kysely<any>, name: string, entityId: string, limit: number): Promise<EntityEvent[]> {
  const r = await sql<{ id: string; at: Date; kind: EntityEventKind; job_id: string | null; tag: string | null; priority: number | null; detail: string | null; via: EmbedVia | null }>`
    SELECT * FROM (
      (SELECT id::text AS id, at, kind, job_id, tag, priority, detail, NULL::jsonb AS via, kind <> 'enqueued' AS later, id AS seq
       FROM tether.entity_event WHERE name = ${name} AND entity_id = ${entityId}
       ORDER BY id DESC LIMIT ${limit})
      UNION ALL
      (SELECT 'b' || b.id || '.' || u.i || e.suffix, e.at, e.kind, u.job_id, u.tag, u.priority, NULL, u.via, e.later, b.id
       FROM tether.entity_event_batch b
       CROSS JOIN LATERAL unnest(b.entity_ids, b.job_ids, b.kinds, b.tags, b.priorities, b.enqueued_at, b.vias)
         WITH ORDINALITY AS u(entity_id, job_id, kind, tag, priority, enqueued_at, via, i)
       CROSS JOIN LATERAL (VALUES (b.at, u.kind, '', true), (u.enqueued_at, 'enqueued', 'e', false)) AS e(at, kind, suffix, later)
       WHERE b.name = ${name} AND b.entity_ids @> ARRAY[${entityId}::text] AND u.entity_id = ${entityId}
         AND (e.later OR NOT ${enqueueRecorded(name, entityId, sql`u.job_id`)})
       ORDER BY b.id DESC LIMIT ${limit})
      UNION ALL
      (SELECT 'j' || j.id, j.enqueued_at, 'enqueued', j.id, j.tag, j.priority,
              CASE WHEN j.last_error IS NOT NULL THEN 'retried from the dead-letter table' WHEN j.kwargs->>'force' = 'true' THEN 'forced' END,
              j.kwargs->'via', false, j.id
       FROM tether.job j WHERE j.name = ${name} AND j.kwargs->>'id' = ${entityId} AND NOT starts_with(j.tag, ${REINDEX_TAG_PREFIX})
         AND NOT ${enqueueRecorded(name, entityId, sql`j.id`)}
       ORDER BY j.id DESC LIMIT ${limit})
    ) AS h
    ORDER BY at DESC, later DESC, seq DESC LIMIT ${limit}`.execute(db);
  return r.rows.map((x) => ({
    id: String(x.id),
    at: x.at.toISOString(),
    kind: x.kind,
    jobId: x.job_id === null ? null : String(x.job_id),
    tag: x.tag,
    priority: x.priority,
    detail: x.detail,
    via: x.via ?? null,
  }));
}

export interface PruneEntityEventsOptions {
  /** Events older than this are deleted. */
  retentionMs: number;
  /** Newest events kept per entity among entities written to in the last `recentMs`. */
  perEntity: number;
  /** Entities written to within this window are checked against `perEntity`. */
  recentMs: number;
  /** Rows deleted per statement. */
  limit: number;
}

/**
 * Bounds the log: by age, and per entity (batch rows by age only: one is never rewritten). Only recently active entities can have gone over the
 * per-entity bound since the last pass, so only those are counted (the at index bounds the scan).
 */
export async function pruneEntityEvents(db: Kysely<any>, o: PruneEntityEventsOptions): Promise<number> {
  const old = await sql`
    DELETE FROM tether.entity_event WHERE id IN (
      SELECT id FROM tether.entity_event WHERE at < now() - ${o.retentionMs} * interval '1 millisecond' ORDER BY at LIMIT ${o.limit})`.execute(db);
  const over = await sql`
    DELETE FROM tether.entity_event WHERE id IN (
      SELECT e.id FROM (SELECT DISTINCT name, entity_id FROM tether.entity_event
                        WHERE at > now() - ${o.recentMs} * interval '1 millisecond') AS a
      CROSS JOIN LATERAL (
        SELECT id FROM tether.entity_event x WHERE x.name = a.name AND x.entity_id = a.entity_id
        ORDER BY id DESC OFFSET ${o.perEntity}) AS e
      LIMIT ${o.limit})`.execute(db);
  const batches = await sql`
    DELETE FROM tether.entity_event_batch WHERE id IN (
      SELECT id FROM tether.entity_event_batch WHERE at < now() - ${o.retentionMs} * interval '1 millisecond' ORDER BY at LIMIT ${o.limit})`.execute(db);
  return Number(old.numAffectedRows ?? 0) + Number(over.numAffectedRows ?? 0) + Number(batches.numAffectedRows ?? 0);
}
