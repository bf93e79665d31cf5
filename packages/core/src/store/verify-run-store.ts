import { sql, type Kysely } from "kysely";

/** Every SQL statement on tether.verify_run and tether.verify_result lives here. */

export type VerifyRunStatus = "running" | "done" | "failed";

/** fast: the bucketed comparison; deep: the content comparison. */
export type VerifyMode = "fast" | "deep";

/**
 * Who started a run, from `started_by`: the daemon's schedule (`scheduler`), `tether verify`
 * typed by a person (`cli:<user>`), or the console (the signed-in user's name).
 */
export type VerifyTrigger = "schedule" | "cli" | "console";

/** `started_by` of a run `tether verify` records (`cli:<user>`). */
export const cliStartedBy = (user: string): string => `cli:${user}`;

export function verifyTrigger(startedBy: string): VerifyTrigger {
  return startedBy === "scheduler" ? "schedule" : startedBy.startsWith("cli:") ? "cli" : "console";
}

export interface VerifyRunRow {
  id: string;
  collection: string;
  status: VerifyRunStatus;
  startedBy: string;
  /** Where the run came from (`started_by` read: see `VerifyTrigger`). */
  trigger: VerifyTrigger;
  startedAt: string;
  updatedAt: string;
  finishedAt: string | null;
  bucketsTotal: number;
  bucketsDone: number;
  bucketsCompared: number;
  bucketsDiffering: number;
  drifted: Record<string, number>;
  driftedTotal: number;
  enqueued: number;
  error: string | null;
  mode: VerifyMode;
  /** Scheduled runs: the key where the next window starts (the checkpoint), null at the start. */
  cursor: string | null;
  documentsCompared: number;
  documentsTotal: number;
  /** Times another process took the run over from its checkpoint. */
  resumes: number;
}

export interface VerifyRunProgress {
  bucketsTotal: number;
  bucketsDone: number;
  bucketsDiffering: number;
  driftedTotal: number;
}

export interface VerifyRunOutcome {
  bucketsCompared: number;
  bucketsDiffering: number;
  drifted: Record<string, number>;
  driftedTotal: number;
  enqueued: number;
  /** Drifted entity ids by kind. */
  samples: Record<string, readonly string[]>;
  /** Entities compared (the whole run's, resumed ones included). Default: left as it is. */
  documentsCompared?: number;
}

interface Raw {
  id: string; collection: string; status: VerifyRunStatus; started_by: string; started_at: Date; updated_at: Date; finished_at: Date | null;
  buckets_total: number; buckets_done: number; buckets_compared: number; buckets_differing: number; drifted: Record<string, number>;
  drifted_total: number; enqueued: number; error: string | null; mode: VerifyMode; cursor: string | null;
  documents_compared: string; documents_total: string; resumes: number;
}

const toRow = (x: Raw): VerifyRunRow => ({
  id: String(x.id),
  collection: x.collection,
  status: x.status,
  startedBy: x.started_by,
  trigger: verifyTrigger(x.started_by),
  startedAt: x.started_at.toISOString(),
  updatedAt: x.updated_at.toISOString(),
  finishedAt: x.finished_at ? x.finished_at.toISOString() : null,
  bucketsTotal: x.buckets_total,
  bucketsDone: x.buckets_done,
  bucketsCompared: x.buckets_compared,
  bucketsDiffering: x.buckets_differing,
  drifted: x.drifted,
  driftedTotal: x.drifted_total,
  enqueued: x.enqueued,
  error: x.error,
  mode: x.mode,
  cursor: x.cursor,
  documentsCompared: Number(x.documents_compared),
  documentsTotal: Number(x.documents_total),
  resumes: x.resumes,
});

export async function createVerifyRun(db: Kysely<any>, collection: string, startedBy: string, mode: VerifyMode = "fast"): Promise<VerifyRunRow> {
  const r = await sql<Raw>`INSERT INTO tether.verify_run (collection, started_by, mode) VALUES (${collection}, ${startedBy}, ${mode}) RETURNING *`.execute(db);
  return toRow(r.rows[0]!);
}

export async function updateVerifyRunProgress(db: Kysely<any>, id: string, p: VerifyRunProgress): Promise<void> {
  await sql`UPDATE tether.verify_run SET updated_at = now(), buckets_total = ${p.bucketsTotal}, buckets_done = ${p.bucketsDone},
            buckets_differing = ${p.bucketsDiffering}, drifted_total = ${p.driftedTotal}
            WHERE id = ${id}::bigint AND status = 'running'`.execute(db);
}

/** Records the outcome and the drifted ids in one transaction. */
export async function finishVerifyRun(db: Kysely<any>, id: string, o: VerifyRunOutcome): Promise<void> {
  const kinds: string[] = [];
  const ids: string[] = [];
  for (const [kind, list] of Object.entries(o.samples)) {
    for (const e of list) {
      kinds.push(kind);
      ids.push(e);
    }
  }
  await db.transaction().execute(async (trx) => {
    await sql`UPDATE tether.verify_run SET status = 'done', updated_at = now(), finished_at = now(), buckets_done = buckets_total,
              buckets_compared = ${o.bucketsCompared}, buckets_differing = ${o.bucketsDiffering}, drifted = ${JSON.stringify(o.drifted)}::jsonb,
              drifted_total = ${o.driftedTotal}, enqueued = ${o.enqueued},
              documents_compared = coalesce(${o.documentsCompared ?? null}::bigint, documents_compared) WHERE id = ${id}::bigint`.execute(trx);
    if (ids.length > 0) {
      await sql`INSERT INTO tether.verify_result (run_id, kind, entity_id)
                SELECT ${id}::bigint, k, e FROM unnest(${kinds}::text[], ${ids}::text[]) AS u(k, e) ON CONFLICT DO NOTHING`.execute(trx);
    }
  });
}

export async function failVerifyRun(db: Kysely<any>, id: string, error: string): Promise<void> {
  await sql`UPDATE tether.verify_run SET status = 'failed', updated_at = now(), finished_at = now(), error = left(${error}, 2000) WHERE id = ${id}::bigint`.execute(db);
}

/** Console runs left "running" by a process that died: no progress for `staleSeconds` (a scheduled run is resumed instead). */
export async function failAbandonedVerifyRuns(db: Kysely<any>, staleSeconds: number): Promise<number> {
  const r = await sql`UPDATE tether.verify_run SET status = 'failed', finished_at = now(), error = 'abandoned: no progress reported (its process stopped)'
                      WHERE status = 'running' AND lease_until IS NULL AND updated_at < now() - ${staleSeconds} * interval '1 second'`.execute(db);
  return Number(r.numAffectedRows ?? 0);
}

export { toRow as verifyRunFromRaw, type Raw as VerifyRunRaw };

export async function listVerifyRuns(db: Kysely<any>, f: { collection?: string; before?: string; limit: number }): Promise<VerifyRunRow[]> {
  const r = await sql<Raw>`SELECT * FROM tether.verify_run
    WHERE (${f.collection ?? null}::text IS NULL OR collection = ${f.collection ?? null})
      AND (${f.before ?? null}::bigint IS NULL OR id < ${f.before ?? null}::bigint)
    ORDER BY id DESC LIMIT ${f.limit}`.execute(db);
  return r.rows.map(toRow);
}

export async function getVerifyRun(db: Kysely<any>, id: string): Promise<{ run: VerifyRunRow; results: { kind: string; entityId: string }[] } | undefined> {
  const r = await sql<Raw>`SELECT * FROM tether.verify_run WHERE id = ${id}::bigint`.execute(db);
  if (!r.rows[0]) return undefined;
  const res = await sql<{ kind: string; entity_id: string }>`
    SELECT kind, entity_id FROM tether.verify_result WHERE run_id = ${id}::bigint ORDER BY kind, entity_id LIMIT 1000`.execute(db);
  return { run: toRow(r.rows[0]), results: res.rows.map((x) => ({ kind: x.kind, entityId: x.entity_id })) };
}
