import { sql, type Kysely, type RawBuilder } from "kysely";
import { FANOUT_TAG_PREFIX, REINDEX_TAG_PREFIX, type JobRow, type NewJob } from "../job.js";
import { instant, pinnedClock as at } from "./pinned-clock.js";
import { notifyWake } from "../wake/wake-store.js";

/**
 * Every SQL statement on tether.job lives here (parking and sweeping move rows on into
 * tether.dead_job in the same statement). Time-dependent statements take an optional `now`.
 */

type Db = Kysely<any>;

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
  // Due-now work (verify's repairs, a writer without grace) wakes drainers; grace-delayed work must not.
  const due = jobs.find((j) => j.delayMs <= 0);
  if (due) await notifyWake(db, due.name);
  return r.rows.map((x) => String(x.id));
}

export interface ClaimOptions {
  limit: number;
  /** Pin the clock (tests). Defaults to the database's now(). */
  now?: Date;
  /**
   * Bounds the rest of the drain transaction (statement_timeout = deadlineMs, lock_timeout
   * 5 s, idle_in_transaction_session_timeout = deadlineMs + 10 s), set by the claim itself so
   * a pass spends no round trip on it. Omit to leave the session's settings alone.
   */
  deadlineMs?: number;
  /** Jobs this transaction claimed already (a second claim in it would see them again: its own locks do not skip). */
  exclude?: readonly string[];
}

/** Expired jobs a claim moved to the dead-letter table, per lane. */
export interface SweptLane {
  name: string;
  tag: string;
  priority: number;
  count: number;
}

export interface ClaimResult {
  jobs: JobRow[];
  expired: SweptLane[];
}

/**
 * Claims up to `limit` due jobs of unpaused lanes, lowest priority first, then by when they
 * became due, in ONE statement. Must run inside the drain transaction: the row locks are the
 * claim.
 *
 * The statement walks the claim index one priority at a time (a loose index scan finds the
 * priorities; `scheduled_at <= now` is an index condition, so future jobs cost nothing), reads
 * the paused lanes, and sweeps: an expired job it meets (expired jobs sit at the front, their
 * scheduled_at is old) is moved to tether.dead_job and counted as a completion instead of
 * being filtered row by row on every claim. Expired jobs count towards `limit`, so a claim
 * never scans more rows than it takes; `expired` says how many of them there were.
 */
export async function claimBatch(trx: Db, opts: ClaimOptions): Promise<ClaimResult> {
  const now = at(opts.now);
  const limits =
    opts.deadlineMs === undefined
      ? sql`SELECT 1`
      : sql`SELECT set_config('idle_in_transaction_session_timeout', ${String(opts.deadlineMs + 10_000)}, true),
                   set_config('statement_timeout', ${String(opts.deadlineMs)}, true),
                   set_config('lock_timeout', '5000', true)`;
  const r = await sql<JobRow & { expired: boolean; count: string | null }>`
    WITH RECURSIVE p AS (
      (SELECT priority FROM tether.job ORDER BY priority LIMIT 1)
      UNION ALL
      SELECT (SELECT j.priority FROM tether.job j WHERE j.priority > p.priority ORDER BY j.priority LIMIT 1)
      FROM p WHERE p.priority IS NOT NULL
    ), limits AS MATERIALIZED (${limits}),
    c AS MATERIALIZED (
      SELECT j.* FROM p CROSS JOIN limits CROSS JOIN LATERAL (
        SELECT ctid, id, name, priority, tag, kwargs, attempts, enqueued_at, scheduled_at, expires_at <= ${now} AS expired
        FROM tether.job
        WHERE priority = p.priority AND scheduled_at <= ${now}
          -- Fan-out jobs are claimed apart, by their own short transactions (see embed-store.ts).
          AND NOT starts_with(name, 'fanout_')
          -- A hashed subplan: an array of paused names from a CTE made the planner guess one row
          -- and sort a sequential scan instead of walking the index.
          AND (NOT EXISTS (SELECT FROM tether.paused_name pn WHERE pn.name = tether.job.name) OR expires_at <= ${now})
          ${opts.exclude?.length ? sql`AND id <> ALL(${opts.exclude}::bigint[])` : sql``}
        ORDER BY scheduled_at, id
        LIMIT ${opts.limit}
        FOR UPDATE SKIP LOCKED) AS j
      WHERE p.priority IS NOT NULL
      LIMIT ${opts.limit}
    ), swept AS (
      DELETE FROM tether.job WHERE id IN (SELECT id FROM c WHERE expired)
      RETURNING *
    ), dead AS (
      INSERT INTO tether.dead_job (job_id, name, enqueued_at, scheduled_at, expires_at, priority, tag, kwargs, attempts, last_error, reason)
      SELECT id, name, enqueued_at, scheduled_at, expires_at, priority, tag, kwargs, attempts, last_error, 'expired' FROM swept
      RETURNING name, tag, priority
    ), stat AS (
      INSERT INTO tether.job_stat (name, tag, priority, outcome, count)
      SELECT name, tag, priority, 'expired', count(*) FROM dead GROUP BY 1, 2, 3
      RETURNING name, tag, priority, count
    )
    SELECT id, name, priority, tag, kwargs, attempts, tid, expired, count FROM (
      SELECT id, name, priority, tag, kwargs, attempts, ctid::text AS tid, false AS expired, NULL::int AS count, scheduled_at FROM c WHERE NOT expired
      UNION ALL
      SELECT NULL, name, priority, tag, NULL, NULL, NULL, true, count, NULL FROM stat
    ) AS r
    ORDER BY expired, priority, scheduled_at, id`.execute(trx);
  const jobs: JobRow[] = [];
  const expired: SweptLane[] = [];
  for (const row of r.rows) {
    if (row.expired) expired.push({ name: row.name, tag: row.tag, priority: row.priority, count: Number(row.count) });
    else jobs.push({ id: String(row.id), name: row.name, priority: row.priority, tag: row.tag, kwargs: row.kwargs, attempts: row.attempts, tid: row.tid });
  }
  return { jobs, expired };
}

/** The jobs of `claimBatch` (expired ones it met are swept all the same). */
export async function claimJobs(trx: Db, opts: ClaimOptions): Promise<JobRow[]> {
  return (await claimBatch(trx, opts)).jobs;
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
  /** False when nothing failed (the job has work left for the next pass): no attempt is counted. Default true. */
  attempt?: boolean;
}

/** Counts a failed attempt (unless `attempt` is false) and pushes the job back by `delayMs`. */
export async function rescheduleJobs(db: Db, items: readonly Reschedule[]): Promise<void> {
  if (items.length === 0) return;
  await sql`
    UPDATE tether.job j
    SET attempts = j.attempts + u.attempt::int,
        -- clock_timestamp(), not now(): the drain transaction may have started up to its deadline ago.
        scheduled_at = clock_timestamp() + u.delay_ms * interval '1 millisecond',
        last_error = left(u.error, 2000)
    FROM unnest(${items.map((i) => i.id)}::bigint[], ${items.map((i) => Math.round(i.delayMs))}::bigint[],
                ${items.map((i) => i.error)}::text[], ${items.map((i) => i.attempt !== false)}::boolean[]) AS u(id, delay_ms, error, attempt)
    WHERE j.id = u.id`.execute(db);
}

/** Makes jobs due again after `delayMs`, counting no attempt (nothing failed: they wait their turn). */
export async function postponeJobs(db: Db, ids: readonly string[], delayMs: number): Promise<void> {
  if (ids.length === 0) return;
  await sql`UPDATE tether.job SET scheduled_at = clock_timestamp() + ${Math.round(delayMs)} * interval '1 millisecond'
            WHERE id = ANY(${[...ids]}::bigint[])`.execute(db);
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

/** One job per entity id the `source` query yields (a single `INSERT … SELECT`, never a loop). */
export async function insertJobsSelecting(
  db: Db,
  job: { name: string; priority: number; tag: string; force?: boolean },
  source: RawBuilder<unknown>,
): Promise<number> {
  const kwargsExtra = job.force ? sql`|| '{"force": true}'::jsonb` : sql``;
  const r = await sql`
    INSERT INTO tether.job (name, priority, tag, kwargs)
    SELECT ${job.name}, ${job.priority}, ${job.tag}, jsonb_build_object('id', s.id) ${kwargsExtra}
    FROM (${source}) AS s`.execute(db);
  return Number(r.numAffectedRows ?? 0);
}

/**
 * Counts of tether.job in one GROUPING SETS scan: per lane (name, tag, priority), per name,
 * per tag, per priority and overall. The figures are defined in docs/queue-figures.md.
 */
export interface JobGroupAggregate {
  dim: "lane" | "name" | "tag" | "priority" | "all";
  name: string | null;
  tag: string | null;
  priority: number | null;
  total: number;
  due: number;
  future: number;
  expired: number;
  /** Seconds the group's oldest waiting job has waited (see `oldestDueAgeSeconds`); null when none waits. */
  oldestWaitSeconds: number | null;
  at: Date;
}

export async function aggregateJobs(db: Db, opts: { now?: Date } = {}): Promise<JobGroupAggregate[]> {
  const now = at(opts.now);
  const r = await sql<{ g_name: number; g_tag: number; g_priority: number; name: string | null; tag: string | null; priority: number | null; total: string; due: string; future: string; expired: string; oldest_wait: number | null; at: Date }>`
    SELECT grouping(name) AS g_name, grouping(tag) AS g_tag, grouping(priority) AS g_priority,
           name, tag, priority,
           count(*) AS total,
           count(*) FILTER (WHERE scheduled_at <= ${now} AND expires_at > ${now}) AS due,
           count(*) FILTER (WHERE scheduled_at > ${now} AND expires_at > ${now}) AS future,
           count(*) FILTER (WHERE expires_at <= ${now}) AS expired,
           -- Waiting since it became due when never attempted; since it was enqueued once it has
           -- failed (its backoff moved scheduled_at forward, hiding how long it has waited).
           extract(epoch FROM ${now} - min(CASE WHEN attempts > 0 THEN enqueued_at WHEN scheduled_at <= ${now} THEN scheduled_at END)
                                         FILTER (WHERE expires_at > ${now}))::float8 AS oldest_wait,
           ${now} AS at
    FROM tether.job
    GROUP BY GROUPING SETS ((name, tag, priority), (name), (tag), (priority), ())`.execute(db);
  return r.rows.map((x) => ({
    dim: x.g_name + x.g_tag + x.g_priority === 0 ? "lane" : Number(x.g_name) === 0 ? "name" : Number(x.g_tag) === 0 ? "tag" : Number(x.g_priority) === 0 ? "priority" : "all",
    name: x.name,
    tag: x.tag,
    priority: x.priority,
    total: Number(x.total),
    due: Number(x.due),
    future: Number(x.future),
    expired: Number(x.expired),
    oldestWaitSeconds: x.oldest_wait === null ? null : Number(x.oldest_wait),
    at: new Date(x.at),
  }));
}

/**
 * Live jobs (neither re-index nor fan-out work, see isLiveTag) that were already queued at
 * `before` and still are (unexpired) at `now`: a lower
 * bound of the live queue length at every instant in between, needing no samples. (Jobs moved
 * back by `retryDeadJobs` keep their enqueued_at and count as queued since then.)
 */
export async function livePersistentJobs(db: Db, before: Date, opts: { now?: Date } = {}): Promise<number> {
  const r = await sql<{ n: string }>`
    SELECT count(*) AS n FROM tether.job
    WHERE enqueued_at <= ${instant(before)} AND expires_at > ${at(opts.now)}
      AND NOT starts_with(tag, ${REINDEX_TAG_PREFIX}) AND NOT starts_with(tag, ${FANOUT_TAG_PREFIX})`.execute(db);
  return Number(r.rows[0]!.n);
}

/**
 * Unexpired jobs of unpaused lanes that a working drainer would have confirmed by `now`: due
 * since before `dueBefore` and never attempted, or enqueued before it and failing since (their
 * backoff moved scheduled_at forward, so it cannot tell how long they have waited). Paused
 * lanes are excluded: pausing is deliberate.
 */
export async function staleDueJobs(db: Db, dueBefore: Date, opts: { now?: Date } = {}): Promise<number> {
  const before = instant(dueBefore);
  const r = await sql<{ n: string }>`
    SELECT count(*) AS n FROM tether.job j
    WHERE (j.scheduled_at <= ${before} OR (j.attempts > 0 AND j.enqueued_at <= ${before}))
      AND j.expires_at > ${at(opts.now)}
      AND NOT EXISTS (SELECT 1 FROM tether.paused_name p WHERE p.name = j.name)`.execute(db);
  return Number(r.rows[0]!.n);
}

/** Dead and live tuples of tether.job, from the statistics collector. */
export async function jobTableTuples(db: Db): Promise<{ dead: number; live: number } | undefined> {
  const r = await sql<{ dead: string; live: string }>`
    SELECT n_dead_tup AS dead, n_live_tup AS live FROM pg_stat_user_tables
    WHERE schemaname = 'tether' AND relname = 'job'`.execute(db);
  const row = r.rows[0];
  return row ? { dead: Number(row.dead), live: Number(row.live) } : undefined;
}

/** VACUUM cannot run inside a transaction; SKIP_LOCKED makes a rare second leader a no-op. */
export async function vacuumJobTable(db: Db): Promise<void> {
  await sql`VACUUM (SKIP_LOCKED, ANALYZE) tether.job`.execute(db);
}

/**
 * Milliseconds (database clock) until the next unexpired job of an unpaused lane becomes due:
 * 0 when one is due now, null when none waits. What `drain --until-empty` sleeps for.
 */
export async function msUntilNextDue(db: Db, pausedNames: readonly string[] = []): Promise<number | null> {
  const r = await sql<{ ms: number | null }>`
    -- No row gives NULL (nothing waits); greatest() would turn that into 0, "due now".
    SELECT (extract(epoch FROM min(scheduled_at) - now()) * 1000)::float8 AS ms
    FROM tether.job
    WHERE expires_at > now() AND name <> ALL(${[...pausedNames]}::text[])`.execute(db);
  const ms = r.rows[0]?.ms;
  return ms === null || ms === undefined ? null : Math.max(0, Math.ceil(Number(ms)));
}

/** The most frequent last errors of waiting jobs of unpaused lanes (what an operator reads first). */
export async function commonLastErrors(db: Db, pausedNames: readonly string[] = [], limit = 3): Promise<{ error: string; jobs: number }[]> {
  const r = await sql<{ error: string; jobs: string }>`
    SELECT last_error AS error, count(*) AS jobs FROM tether.job
    WHERE last_error IS NOT NULL AND name <> ALL(${[...pausedNames]}::text[])
    GROUP BY last_error ORDER BY count(*) DESC, last_error LIMIT ${limit}`.execute(db);
  return r.rows.map((x) => ({ error: x.error, jobs: Number(x.jobs) }));
}

/** True once tether's migrations created its job table in this database. */
export async function jobTableExists(db: Db): Promise<boolean> {
  const r = await sql<{ present: boolean }>`SELECT to_regclass('tether.job') IS NOT NULL AS present`.execute(db);
  return r.rows[0]?.present === true;
}
