import { sql, type Kysely } from "kysely";
import type { CompletionOutcome, JobRow, NewJob } from "./job.js";

/** Every SQL statement on tether.job and its side tables lives here. */

type Db = Kysely<any>;
const at = (now: Date | undefined) => (now ? sql`${now.toISOString()}::timestamptz` : sql`now()`);

/** One multi-row insert of sync jobs. */
export async function insertJobs(db: Db, jobs: readonly NewJob[]): Promise<string[]> {
  if (jobs.length === 0) return [];
  const r = await sql<{ id: string }>`
    INSERT INTO tether.job (name, scheduled_at, priority, tag, kwargs)
    SELECT j.name, now() + j.delay_ms * interval '1 millisecond', j.priority, j.tag,
           jsonb_strip_nulls(jsonb_build_object('id', j.entity_id, 'force', j.force, 'version', j.version))
    FROM unnest(${jobs.map((j) => j.name)}::text[], ${jobs.map((j) => j.entityId)}::text[],
                ${jobs.map((j) => j.priority)}::int[], ${jobs.map((j) => j.tag)}::text[],
                ${jobs.map((j) => j.delayMs)}::bigint[], ${jobs.map((j) => (j.force ? true : null))}::boolean[],
                ${jobs.map((j) => j.version ?? null)}::bigint[])
         AS j(name, entity_id, priority, tag, delay_ms, force, version)
    RETURNING id`.execute(db);
  return r.rows.map((x) => String(x.id));
}

/** Distinct priorities present, by a loose index scan (one probe per priority). */
async function priorities(db: Db): Promise<number[]> {
  const r = await sql<{ priority: number }>`
    WITH RECURSIVE p AS (
      (SELECT priority FROM tether.job ORDER BY priority LIMIT 1)
      UNION ALL
      SELECT (SELECT j.priority FROM tether.job j WHERE j.priority > p.priority ORDER BY j.priority LIMIT 1)
      FROM p WHERE p.priority IS NOT NULL
    )
    SELECT priority FROM p WHERE priority IS NOT NULL`.execute(db);
  return r.rows.map((x) => x.priority);
}

export interface ClaimOptions {
  limit: number;
  pausedNames?: readonly string[];
  /** Pin the clock (tests). Defaults to the database's now(). */
  now?: Date;
}

/**
 * Claims up to `limit` due, unexpired jobs of unpaused lanes, lowest priority first, then by
 * when they became due. Must run inside the drain transaction: the row locks are the claim.
 */
export async function claimJobs(trx: Db, opts: ClaimOptions): Promise<JobRow[]> {
  const out: JobRow[] = [];
  const paused = [...(opts.pausedNames ?? [])];
  for (const priority of await priorities(trx)) {
    const remaining = opts.limit - out.length;
    if (remaining <= 0) break;
    const r = await sql<JobRow>`
      SELECT id, name, priority, tag, kwargs, attempts, enqueued_at, scheduled_at
      FROM tether.job
      WHERE priority = ${priority} AND scheduled_at <= ${at(opts.now)} AND expires_at > ${at(opts.now)}
        AND name <> ALL(${paused}::text[])
      ORDER BY scheduled_at, id
      LIMIT ${remaining}
      FOR UPDATE SKIP LOCKED`.execute(trx);
    for (const row of r.rows) out.push({ ...row, id: String(row.id) });
  }
  return out;
}

/** Deletes confirmed jobs. */
export async function deleteJobs(db: Db, ids: readonly string[]): Promise<number> {
  if (ids.length === 0) return 0;
  const r = await sql`DELETE FROM tether.job WHERE id = ANY(${ids}::bigint[])`.execute(db);
  return Number(r.numAffectedRows ?? 0);
}

export interface Reschedule {
  id: string;
  delayMs: number;
  error: string;
}

/** Counts a failed attempt and pushes the job back by its backoff. */
export async function rescheduleJobs(db: Db, items: readonly Reschedule[]): Promise<void> {
  if (items.length === 0) return;
  await sql`
    UPDATE tether.job j
    SET attempts = j.attempts + 1,
        -- clock_timestamp(), not now(): the drain transaction may have started up to its deadline ago.
        scheduled_at = clock_timestamp() + u.delay_ms * interval '1 millisecond',
        last_error = left(u.error, 2000)
    FROM unnest(${items.map((i) => i.id)}::bigint[], ${items.map((i) => Math.round(i.delayMs))}::bigint[],
                ${items.map((i) => i.error)}::text[]) AS u(id, delay_ms, error)
    WHERE j.id = u.id`.execute(db);
}

export interface Park {
  id: string;
  error: string;
}

/** Moves jobs to the dead-letter table with their reason. */
export async function parkJobs(db: Db, items: readonly Park[]): Promise<number> {
  if (items.length === 0) return 0;
  const r = await sql`
    WITH u AS (
      SELECT * FROM unnest(${items.map((i) => i.id)}::bigint[], ${items.map((i) => i.error)}::text[]) AS u(id, error)
    ), moved AS (
      DELETE FROM tether.job j USING u WHERE j.id = u.id
      RETURNING j.*, u.error
    )
    INSERT INTO tether.dead_job (job_id, name, enqueued_at, scheduled_at, expires_at, priority, tag, kwargs, attempts, last_error, reason)
    SELECT id, name, enqueued_at, scheduled_at, expires_at, priority, tag, kwargs, attempts + 1, left(error, 2000), 'parked'
    FROM moved`.execute(db);
  return Number(r.numAffectedRows ?? 0);
}

/** Moves up to `limit` expired jobs to the dead-letter table; returns what moved, by lane. */
export async function sweepExpired(
  db: Db,
  opts: { limit: number; now?: Date },
): Promise<{ name: string; tag: string; priority: number; count: number }[]> {
  const r = await sql<{ name: string; tag: string; priority: number; count: string }>`
    WITH moved AS (
      DELETE FROM tether.job WHERE id IN (
        SELECT id FROM tether.job WHERE expires_at <= ${at(opts.now)}
        ORDER BY expires_at LIMIT ${opts.limit} FOR UPDATE SKIP LOCKED)
      RETURNING *
    ), ins AS (
      INSERT INTO tether.dead_job (job_id, name, enqueued_at, scheduled_at, expires_at, priority, tag, kwargs, attempts, last_error, reason)
      SELECT id, name, enqueued_at, scheduled_at, expires_at, priority, tag, kwargs, attempts, last_error, 'expired' FROM moved
      RETURNING name, tag, priority
    )
    SELECT name, tag, priority, count(*) AS count FROM ins GROUP BY 1, 2, 3`.execute(db);
  return r.rows.map((x) => ({ ...x, count: Number(x.count) }));
}

export interface CompletionCount {
  name: string;
  tag: string;
  priority: number;
  outcome: CompletionOutcome;
  count: number;
}

/** Appends completion counts (append-only: no row contention between drainers). */
export async function recordCompletions(db: Db, rows: readonly CompletionCount[]): Promise<void> {
  const nonZero = rows.filter((r) => r.count > 0);
  if (nonZero.length === 0) return;
  await sql`
    INSERT INTO tether.job_stat (name, tag, priority, outcome, count)
    SELECT * FROM unnest(${nonZero.map((r) => r.name)}::text[], ${nonZero.map((r) => r.tag)}::text[],
                         ${nonZero.map((r) => r.priority)}::int[], ${nonZero.map((r) => r.outcome)}::text[],
                         ${nonZero.map((r) => r.count)}::int[])`.execute(db);
}

/** Names of paused lanes. */
export async function pausedNames(db: Db): Promise<string[]> {
  const r = await sql<{ name: string }>`SELECT name FROM tether.paused_name ORDER BY name`.execute(db);
  return r.rows.map((x) => x.name);
}

export async function pauseName(db: Db, name: string, reason?: string): Promise<void> {
  await sql`INSERT INTO tether.paused_name (name, reason) VALUES (${name}, ${reason ?? null})
            ON CONFLICT (name) DO UPDATE SET reason = excluded.reason`.execute(db);
}

export async function resumeName(db: Db, name: string): Promise<boolean> {
  const r = await sql`DELETE FROM tether.paused_name WHERE name = ${name}`.execute(db);
  return Number(r.numAffectedRows ?? 0) > 0;
}
