import { sql, type Kysely } from "kysely";

/** Every SQL statement on tether.entity_event lives here (the triggers are in the migration). */

export type EntityEventKind = "enqueued" | "synced" | "repaired" | "forced" | "deleted" | "parked" | "expired" | "cancelled" | "discarded" | "reprioritized";

export interface NewEntityEvent {
  name: string;
  entityId: string;
  kind: EntityEventKind;
  jobId?: string;
  tag?: string;
  priority?: number;
  detail?: string;
}

export interface EntityEvent {
  id: string;
  at: string;
  kind: EntityEventKind;
  jobId: string | null;
  tag: string | null;
  priority: number | null;
  detail: string | null;
}

/** Appends events in one statement. */
export async function recordEntityEvents(db: Kysely<any>, events: readonly NewEntityEvent[]): Promise<void> {
  if (events.length === 0) return;
  await sql`
    INSERT INTO tether.entity_event (name, entity_id, kind, job_id, tag, priority, detail)
    SELECT * FROM unnest(${events.map((e) => e.name)}::text[], ${events.map((e) => e.entityId)}::text[], ${events.map((e) => e.kind)}::text[],
                         ${events.map((e) => e.jobId ?? null)}::bigint[], ${events.map((e) => e.tag ?? null)}::text[],
                         ${events.map((e) => e.priority ?? null)}::int[], ${events.map((e) => (e.detail === undefined ? null : e.detail.slice(0, 500)))}::text[])`.execute(db);
}

/** The newest events of one entity, newest first. */
export async function listEntityEvents(db: Kysely<any>, name: string, entityId: string, limit: number): Promise<EntityEvent[]> {
  const r = await sql<{ id: string; at: Date; kind: EntityEventKind; job_id: string | null; tag: string | null; priority: number | null; detail: string | null }>`
    SELECT id, at, kind, job_id, tag, priority, detail FROM tether.entity_event
    WHERE name = ${name} AND entity_id = ${entityId}
    ORDER BY id DESC LIMIT ${limit}`.execute(db);
  return r.rows.map((x) => ({ id: String(x.id), at: x.at.toISOString(), kind: x.kind, jobId: x.job_id === null ? null : String(x.job_id), tag: x.tag, priority: x.priority, detail: x.detail }));
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
 * Bounds the log: by age, and per entity. Only recently active entities can have gone over the
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
  return Number(old.numAffectedRows ?? 0) + Number(over.numAffectedRows ?? 0);
}
