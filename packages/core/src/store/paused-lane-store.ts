import { sql, type Kysely } from "kysely";

/** Every SQL statement on tether.paused_name lives here. */

type Db = Kysely<any>;

export interface PausedLane {
  name: string;
  pausedAt: string;
  reason: string | null;
}

/** Names of paused lanes. */
export async function pausedNames(db: Db): Promise<string[]> {
  const r = await sql<{ name: string }>`SELECT name FROM tether.paused_name ORDER BY name`.execute(db);
  return r.rows.map((x) => x.name);
}

/** Paused lanes with when and why, by name. */
export async function pausedLanes(db: Db): Promise<PausedLane[]> {
  const r = await sql<{ name: string; paused_at: Date; reason: string | null }>`
    SELECT name, paused_at, reason FROM tether.paused_name ORDER BY name`.execute(db);
  return r.rows.map((p) => ({ name: p.name, pausedAt: new Date(p.paused_at).toISOString(), reason: p.reason }));
}

export async function pauseName(db: Db, name: string, reason?: string): Promise<void> {
  await sql`INSERT INTO tether.paused_name (name, reason) VALUES (${name}, ${reason ?? null})
            ON CONFLICT (name) DO UPDATE SET reason = excluded.reason`.execute(db);
}

export async function resumeName(db: Db, name: string): Promise<boolean> {
  const r = await sql`DELETE FROM tether.paused_name WHERE name = ${name}`.execute(db);
  return Number(r.numAffectedRows ?? 0) > 0;
}

/**
 * Pauses a lane for `reason` unless it is paused already. Returns since when it is paused for
 * `reason` (now, or when an earlier holder with the same reason paused it: an interrupted run
 * resuming), or undefined when someone else paused it (for their own reason).
 */
export async function holdPausedName(db: Db, name: string, reason: string): Promise<Date | undefined> {
  const r = await sql<{ paused_at: Date; reason: string | null }>`
    WITH ins AS (
      INSERT INTO tether.paused_name (name, reason) VALUES (${name}, ${reason}) ON CONFLICT (name) DO NOTHING RETURNING paused_at, reason
    )
    SELECT paused_at, reason FROM ins UNION ALL SELECT paused_at, reason FROM tether.paused_name WHERE name = ${name}`.execute(db);
  const row = r.rows[0];
  return row && row.reason === reason ? new Date(row.paused_at) : undefined;
}

/** Resumes a lane only if it is still paused for `reason` (an operator's own pause stays). */
export async function releasePausedName(db: Db, name: string, reason: string): Promise<boolean> {
  const r = await sql`DELETE FROM tether.paused_name WHERE name = ${name} AND reason = ${reason}`.execute(db);
  return Number(r.numAffectedRows ?? 0) > 0;
}
