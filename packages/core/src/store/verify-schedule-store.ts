import { sql, type Kysely } from "kysely";
import { verifyRunFromRaw, verifyTrigger, type VerifyMode, type VerifyRunRaw, type VerifyRunRow, type VerifyTrigger } from "./verify-run-store.js";

/**
 * Every statement on the scheduled runs of tether.verify_run (migration 000013): a run taken by
 * one process at a time under a lease, checkpointed after each window, resumed by the next
 * process once the lease passed; and the last completed run of each collection and mode.
 */

/** Who the scheduler starts runs as (`started_by`). */
export const SCHEDULER = "scheduler";

/** What the scheduler decides on for one collection and mode. */
export interface ScheduledRunState {
  /**
   * When the last run of this mode ended: completed (scheduled or not), or a scheduled one
   * failed (tried again after the interval, not at once); undefined if none ever did.
   */
  lastDoneAt: Date | undefined;
  /** The scheduled run in progress, if any; `leaseExpired` when no process holds it. */
  running: { id: string; leaseExpired: boolean } | undefined;
}

export async function scheduledRunStates(db: Kysely<any>, mode: VerifyMode): Promise<{ now: Date; states: Map<string, ScheduledRunState> }> {
  const r = await sql<{ collection: string; last_done: Date | null; running_id: string | null; lease_expired: boolean | null; now: Date }>`
    WITH done AS (SELECT collection, max(finished_at) AS last_done FROM tether.verify_run
                  WHERE (status = 'done' OR (status = 'failed' AND lease_until IS NOT NULL)) AND mode = ${mode} GROUP BY collection),
         running AS (SELECT collection, id::text AS running_id, lease_until < now() AS lease_expired FROM tether.verify_run
                     WHERE status = 'running' AND mode = ${mode} AND lease_until IS NOT NULL)
    SELECT coalesce(d.collection, r.collection) AS collection, d.last_done, r.running_id, r.lease_expired, now() AS now
    FROM done d FULL JOIN running r ON r.collection = d.collection
    UNION ALL SELECT NULL, NULL, NULL, NULL, now()`.execute(db);
  const states = new Map<string, ScheduledRunState>();
  for (const x of r.rows) {
    if (x.collection === null) continue;
    states.set(x.collection, {
      lastDoneAt: x.last_done ?? undefined,
      running: x.running_id === null ? undefined : { id: x.running_id, leaseExpired: x.lease_expired === true },
    });
  }
  return { now: r.rows[r.rows.length - 1]!.now, states };
}

/** Starts a scheduled run under `owner`'s lease; undefined when one of this collection and mode is already running. */
export async function startScheduledRun(db: Kysely<any>, collection: string, mode: VerifyMode, owner: string, leaseMs: number): Promise<VerifyRunRow | undefined> {
  const r = await sql<VerifyRunRaw>`
    INSERT INTO tether.verify_run (collection, started_by, mode, lease_owner, lease_until)
    VALUES (${collection}, ${SCHEDULER}, ${mode}, ${owner}, now() + ${leaseMs} * interval '1 millisecond')
    ON CONFLICT (collection, mode) WHERE status = 'running' AND lease_until IS NOT NULL DO NOTHING
    RETURNING *`.execute(db);
  return r.rows[0] ? verifyRunFromRaw(r.rows[0]) : undefined;
}

/** Takes over a scheduled run whose lease passed (its process died); undefined when another process took it first. */
export async function takeOverScheduledRun(db: Kysely<any>, id: string, owner: string, leaseMs: number): Promise<VerifyRunRow | undefined> {
  const r = await sql<VerifyRunRaw>`
    UPDATE tether.verify_run SET lease_owner = ${owner}, lease_until = now() + ${leaseMs} * interval '1 millisecond', resumes = resumes + 1, updated_at = now()
    WHERE id = ${id}::bigint AND status = 'running' AND lease_until < now()
    RETURNING *`.execute(db);
  return r.rows[0] ? verifyRunFromRaw(r.rows[0]) : undefined;
}

/** The figures a checkpoint records (`cursor`: where the next window starts; null: from the start). */
export type ScheduledRunCheckpoint = Pick<
  VerifyRunRow,
  "cursor" | "documentsCompared" | "documentsTotal" | "bucketsTotal" | "bucketsDone" | "bucketsCompared" | "bucketsDiffering" | "drifted" | "driftedTotal" | "enqueued"
>;

/** Records a checkpoint and renews the lease; false when the lease is no longer `owner`'s (the run must stop). */
export async function checkpointScheduledRun(db: Kysely<any>, id: string, owner: string, leaseMs: number, c: ScheduledRunCheckpoint): Promise<boolean> {
  const r = await sql`
    UPDATE tether.verify_run SET updated_at = now(), lease_until = now() + ${leaseMs} * interval '1 millisecond',
      cursor = ${c.cursor}, documents_compared = ${c.documentsCompared}, documents_total = ${c.documentsTotal},
      buckets_total = ${c.bucketsTotal}, buckets_done = ${c.bucketsDone}, buckets_compared = ${c.bucketsCompared},
      buckets_differing = ${c.bucketsDiffering}, drifted = ${JSON.stringify(c.drifted)}::jsonb, drifted_total = ${c.driftedTotal}, enqueued = ${c.enqueued}
    WHERE id = ${id}::bigint AND status = 'running' AND lease_owner = ${owner}`.execute(db);
  return Number(r.numAffectedRows ?? 0) === 1;
}

/** The last completed run of a collection and mode, and the one in progress, as metrics, alerts and status read them. */
export interface VerifyRunSummary {
  collection: string;
  mode: VerifyMode;
  lastDone:
    | { id: string; finishedAt: Date; durationSeconds: number; documentsCompared: number; drifted: Record<string, number>; driftedTotal: number; trigger: VerifyTrigger }
    | undefined;
  running: { id: string; documentsCompared: number; documentsTotal: number; startedAt: Date } | undefined;
  /**
   * When the first run of this collection and mode started, whatever became of it: while none has
   * completed, the overdue alert counts from it (a collection whose runs all fail, or never end,
   * goes overdue; one just scheduled does not).
   */
  firstStartedAt: Date;
}

export async function verifyRunSummaries(db: Kysely<any>): Promise<VerifyRunSummary[]> {
  const r = await sql<{
    collection: string; mode: VerifyMode; kind: "done" | "running" | "first"; id: string; started_at: Date; finished_at: Date | null;
    documents_compared: string; documents_total: string; drifted: Record<string, number>; drifted_total: number; started_by: string;
  }>`
    SELECT * FROM (
      SELECT DISTINCT ON (collection, mode) collection, mode, 'done' AS kind, id::text AS id, started_at, finished_at,
             documents_compared::text, documents_total::text, drifted, drifted_total, started_by
      FROM tether.verify_run WHERE status = 'done' ORDER BY collection, mode, finished_at DESC) d
    UNION ALL
    SELECT * FROM (
      SELECT DISTINCT ON (collection, mode) collection, mode, 'running' AS kind, id::text AS id, started_at, finished_at,
             documents_compared::text, documents_total::text, drifted, drifted_total, started_by
      FROM tether.verify_run WHERE status = 'running' ORDER BY collection, mode, id DESC) r
    UNION ALL
    SELECT collection, mode, 'first', NULL, min(started_at), NULL, '0', '0', '{}'::jsonb, 0, NULL
    FROM tether.verify_run GROUP BY collection, mode`.execute(db);
  const out = new Map<string, VerifyRunSummary>();
  for (const x of r.rows) {
    const key = `${x.collection}\u0000${x.mode}`;
    const s = out.get(key) ?? { collection: x.collection, mode: x.mode, lastDone: undefined, running: undefined, firstStartedAt: x.started_at };
    if (x.kind === "first") {
      s.firstStartedAt = x.started_at;
    } else if (x.kind === "done") {
      s.lastDone = {
        id: x.id,
        finishedAt: x.finished_at!,
        durationSeconds: (x.finished_at!.getTime() - x.started_at.getTime()) / 1000,
        documentsCompared: Number(x.documents_compared),
        drifted: x.drifted,
        driftedTotal: x.drifted_total,
        trigger: verifyTrigger(x.started_by),
      };
    } else {
      s.running = { id: x.id, documentsCompared: Number(x.documents_compared), documentsTotal: Number(x.documents_total), startedAt: x.started_at };
    }
    out.set(key, s);
  }
  return [...out.values()];
}

/** When scheduled verification became available (migration 000013 applied): a collection never verified is overdue from then. */
export async function verifyScheduleSince(db: Kysely<any>): Promise<Date | undefined> {
  const r = await sql<{ at: Date }>`SELECT applied_at AS at FROM tether.migration WHERE namespace = 'tether' AND id = 13`.execute(db);
  return r.rows[0]?.at;
}
