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
