import { sql, type Kysely } from "kysely";

/** Every SQL statement on tether.drainer_heartbeat lives here. */

export interface HeartbeatUpsert {
  id: string;
  host: string;
  pid: number;
  version: string;
  /** Passes and failed passes since the last upsert (added to the stored totals). */
  passes: number;
  failedPasses: number;
  /** Counts of the newest pass, when one ran since the last upsert. */
  lastPass?: Record<string, unknown>;
}

export interface DrainerHeartbeatRow {
  id: string;
  host: string;
  pid: number;
  version: string;
  startedAt: string;
  seenAt: string;
  passes: number;
  failedPasses: number;
  lastPassAt: string | null;
  lastPass: Record<string, unknown> | null;
  stoppedAt: string | null;
  /** Seconds since seen_at, by the database clock. */
  ageSeconds: number;
}

/** Inserts or refreshes one drainer's row. */
export async function upsertHeartbeat(db: Kysely<any>, h: HeartbeatUpsert): Promise<void> {
  const lastPass = h.lastPass === undefined ? null : JSON.stringify(h.lastPass);
  await sql`
    INSERT INTO tether.drainer_heartbeat (id, host, pid, version, passes, failed_passes, last_pass_at, last_pass)
    VALUES (${h.id}, ${h.host}, ${h.pid}, ${h.version}, ${h.passes}, ${h.failedPasses},
            CASE WHEN ${lastPass}::jsonb IS NULL THEN NULL ELSE now() END, ${lastPass}::jsonb)
    ON CONFLICT (id) DO UPDATE SET
      seen_at = now(), stopped_at = NULL,
      passes = tether.drainer_heartbeat.passes + excluded.passes,
      failed_passes = tether.drainer_heartbeat.failed_passes + excluded.failed_passes,
      last_pass_at = coalesce(excluded.last_pass_at, tether.drainer_heartbeat.last_pass_at),
      last_pass = coalesce(excluded.last_pass, tether.drainer_heartbeat.last_pass)`.execute(db);
}

/** Marks a drainer as stopped cleanly. */
export async function markHeartbeatStopped(db: Kysely<any>, id: string): Promise<void> {
  await sql`UPDATE tether.drainer_heartbeat SET stopped_at = now(), seen_at = now() WHERE id = ${id}`.execute(db);
}

/** Every drainer seen within `withinSeconds`, newest first. */
export async function listHeartbeats(db: Kysely<any>, opts: { withinSeconds: number; limit: number }): Promise<DrainerHeartbeatRow[]> {
  const r = await sql<{
    id: string; host: string; pid: number; version: string; started_at: Date; seen_at: Date; passes: string; failed_passes: string;
    last_pass_at: Date | null; last_pass: Record<string, unknown> | null; stopped_at: Date | null; age: number;
  }>`
    SELECT *, extract(epoch FROM now() - seen_at)::float8 AS age
    FROM tether.drainer_heartbeat
    WHERE seen_at > now() - ${opts.withinSeconds} * interval '1 second'
    ORDER BY seen_at DESC, id LIMIT ${opts.limit}`.execute(db);
  return r.rows.map((x) => ({
    id: x.id,
    host: x.host,
    pid: x.pid,
    version: x.version,
    startedAt: x.started_at.toISOString(),
    seenAt: x.seen_at.toISOString(),
    passes: Number(x.passes),
    failedPasses: Number(x.failed_passes),
    lastPassAt: x.last_pass_at ? x.last_pass_at.toISOString() : null,
    lastPass: x.last_pass,
    stoppedAt: x.stopped_at ? x.stopped_at.toISOString() : null,
    ageSeconds: Math.round(Number(x.age) * 10) / 10,
  }));
}

/** Deletes rows of drainers not seen for `olderThanSeconds`. */
export async function pruneHeartbeats(db: Kysely<any>, olderThanSeconds: number): Promise<number> {
  const r = await sql`DELETE FROM tether.drainer_heartbeat WHERE seen_at < now() - ${olderThanSeconds} * interval '1 second'`.execute(db);
  return Number(r.numAffectedRows ?? 0);
}
