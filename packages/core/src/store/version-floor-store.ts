import { sql, type Kysely } from "kysely";
import { instant, pinnedClock as at } from "./pinned-clock.js";

/**
 * Every SQL statement on tether.version_floor and tether.ahead_stat (migration 000014): the
 * version floor taken from the engine, and the documents found ahead of their rows. See
 * ../ops/version-floor.ts and ../ops/restore-alert.ts.
 */

type Db = Kysely<any>;

/** The version `tether.next_version()` would hand out next (the sequence's last value, plus one once called). */
export async function upcomingVersion(db: Db): Promise<number> {
  const r = await sql<{ next: string }>`SELECT (last_value + CASE WHEN is_called THEN 1 ELSE 0 END)::text AS next FROM tether.version_seq`.execute(db);
  return Number(r.rows[0]?.next ?? 1);
}

/**
 * Moves the sequence past `highest`: the next version handed out is above it. One value of the
 * sequence is burnt (`tether.next_version(highest)`, which also moves the sequence when it is
 * behind), so concurrent writers race with nothing: every version given before or after is
 * either below the check or above `highest`. Returns the version burnt.
 */
export async function raiseSequenceAbove(db: Db, highest: number): Promise<number> {
  const r = await sql<{ v: string }>`SELECT tether.next_version(${highest}::bigint)::text AS v`.execute(db);
  return Number(r.rows[0]!.v);
}

/** Which side went back: Postgres (the engine held versions at or above the sequence) or the index (its highest version fell). */
export type RestoreSide = "postgres" | "index";

export interface FloorCheck {
  collection: string;
  engineHighest: number;
  sequenceNext: number;
  /** A restore this check found, if any. */
  restore?: RestoreSide;
}

/** The highest version the last check found in each collection's index. */
export async function lastEngineHighest(db: Db): Promise<Map<string, number>> {
  const r = await sql<{ collection: string; engine_highest: string }>`SELECT collection, engine_highest::text FROM tether.version_floor`.execute(db);
  return new Map(r.rows.map((x) => [x.collection, Number(x.engine_highest)]));
}

/**
 * Forgets the highest version the last check found in a collection's index: the next check
 * compares with nothing. Called when Tether itself lowers it (a rebuild swapped a new index in;
 * a tombstone purge removed documents), so that is not taken for the index going back.
 */
export async function forgetEngineHighest(db: Db, collection: string): Promise<void> {
  await sql`UPDATE tether.version_floor SET engine_highest = 0 WHERE collection = ${collection}`.execute(db);
}

/** Records one check (a restore is kept until a later restore replaces it). */
export async function recordFloorCheck(db: Db, c: FloorCheck, now?: Date): Promise<void> {
  const restore = c.restore ? sql`${at(now)}` : sql`NULL`;
  await sql`
    INSERT INTO tether.version_floor AS f (collection, engine_highest, sequence_next, checked_at, restore_at, restore_side, restore_engine_highest, restore_sequence_next)
    VALUES (${c.collection}, ${c.engineHighest}, ${c.sequenceNext}, ${at(now)}, ${restore}, ${c.restore ?? null},
            ${c.restore ? c.engineHighest : null}, ${c.restore ? c.sequenceNext : null})
    ON CONFLICT (collection) DO UPDATE SET engine_highest = excluded.engine_highest, sequence_next = excluded.sequence_next,
      checked_at = excluded.checked_at,
      restore_at = coalesce(excluded.restore_at, f.restore_at),
      restore_side = coalesce(excluded.restore_side, f.restore_side),
      restore_engine_highest = coalesce(excluded.restore_engine_highest, f.restore_engine_highest),
      restore_sequence_next = coalesce(excluded.restore_sequence_next, f.restore_sequence_next)`.execute(db);
}

export interface UnsettledRestore {
  collection: string;
  side: RestoreSide;
  at: Date;
  engineHighest: number;
  sequenceNext: number;
}

/**
 * Restores found by a floor check with no clean fast verify of the collection finished after
 * them (a verify that found drift repairs it; the next clean one settles the restore).
 */
export async function unsettledRestores(db: Db): Promise<UnsettledRestore[]> {
  const r = await sql<{ collection: string; restore_side: RestoreSide; restore_at: Date; restore_engine_highest: string; restore_sequence_next: string }>`
    SELECT f.collection, f.restore_side, f.restore_at, f.restore_engine_highest::text, f.restore_sequence_next::text FROM tether.version_floor f
    WHERE f.restore_at IS NOT NULL AND NOT EXISTS (
      SELECT 1 FROM tether.verify_run v WHERE v.collection = f.collection AND v.mode = 'fast' AND v.status = 'done'
        AND v.started_at > f.restore_at AND v.drifted_total = 0)
    ORDER BY f.collection`.execute(db);
  return r.rows.map((x) => ({ collection: x.collection, side: x.restore_side, at: x.restore_at, engineHighest: Number(x.restore_engine_highest), sequenceNext: Number(x.restore_sequence_next) }));
}

/** Counts documents a drain pass found ahead of their rows (append-only). */
export async function recordAhead(db: Db, counts: ReadonlyMap<string, number>): Promise<void> {
  const rows = [...counts].filter(([, n]) => n > 0);
  if (rows.length === 0) return;
  await sql`INSERT INTO tether.ahead_stat (collection, count)
    SELECT * FROM unnest(${rows.map(([c]) => c)}::text[], ${rows.map(([, n]) => n)}::int[])`.execute(db);
}

/** Documents found ahead of their rows since `since`, per collection (collections with none are absent). */
export async function aheadSince(db: Db, since: Date): Promise<Map<string, number>> {
  const r = await sql<{ collection: string; n: string }>`
    SELECT collection, sum(count)::text AS n FROM tether.ahead_stat WHERE at > ${instant(since)} GROUP BY collection`.execute(db);
  return new Map(r.rows.map((x) => [x.collection, Number(x.n)]));
}

/** Deletes up to `limit` counts older than `retentionDays`; returns how many. */
export async function pruneAheadStats(db: Db, opts: { retentionDays: number; limit: number; now?: Date }): Promise<number> {
  const r = await sql`
    DELETE FROM tether.ahead_stat WHERE ctid = ANY(ARRAY(
      SELECT ctid FROM tether.ahead_stat WHERE at < ${at(opts.now)} - ${opts.retentionDays} * interval '1 day' LIMIT ${opts.limit}))`.execute(db);
  return Number(r.numAffectedRows ?? 0);
}
