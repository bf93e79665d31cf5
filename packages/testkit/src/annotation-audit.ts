import { sql, type Kysely } from "kysely";
import { ALL_IDS, classifyDrift, type DriftKind, type Sink } from "@tether/core/internal";

export interface Audit {
  rows: number;
  liveRows: number;
  /** Live rows whose document is absent or a tombstone. */
  lost: string[];
  /** Live rows whose document carries another version than the row. */
  stale: string[];
  /** Live documents for soft-deleted rows, or for ids Postgres does not have. */
  duplicates: string[];
  /** Jobs still in tether.job, and jobs parked. */
  jobs: number;
  parked: number;
}

const PAGE = 1_000;

/**
 * Compares every row of `annotation` with its document (realtime _mget of versions), then
 * every live document with Postgres. Pages through Postgres; the live document ids come from
 * the sink's own listing (any sink), one id string each.
 */
export async function auditAnnotations(db: Kysely<any>, sink: Sink): Promise<Audit> {
  const audit: Audit = { rows: 0, liveRows: 0, lost: [], stale: [], duplicates: [], jobs: 0, parked: 0 };
  const put = (kind: DriftKind, id: string) => {
    if (kind === "missing") audit.lost.push(id);
    else if (kind === "stale") audit.stale.push(id);
    else audit.duplicates.push(id);
  };
  let after = "0";
  for (;;) {
    const r = await sql<{ id: string; version: string; live: boolean }>`
      SELECT id::text AS id, version::text AS version, deleted_at IS NULL AS live FROM annotation
      WHERE annotation.id > ${after}::bigint ORDER BY annotation.id LIMIT ${PAGE}`.execute(db);
    if (r.rows.length === 0) break;
    const states = await sink.fetchStates("annotations", r.rows.map((x) => x.id));
    for (const row of r.rows) {
      audit.rows += 1;
      if (row.live) audit.liveRows += 1;
      const kind = classifyDrift({ version: Number(row.version), live: row.live }, states.get(row.id));
      if (kind) put(kind, row.id);
    }
    after = r.rows[r.rows.length - 1]!.id;
  }
  // Documents Postgres does not know: live docs for rows that do not exist.
  await sink.refreshIndex?.("annotations");
  const live = [...(await sink.listStates("annotations", ALL_IDS))]
    .filter(([, state]) => !state.deleted)
    .map(([id]) => id);
  for (let i = 0; i < live.length; i += PAGE) {
    const ids = live.slice(i, i + PAGE);
    const known = await sql<{ id: string }>`SELECT id::text AS id FROM annotation WHERE id = ANY(${ids}::bigint[])`.execute(db);
    const have = new Set(known.rows.map((x) => x.id));
    for (const id of ids) if (!have.has(id)) audit.duplicates.push(id);
  }
  audit.jobs = Number((await sql<{ n: string }>`SELECT count(*) AS n FROM tether.job`.execute(db)).rows[0]!.n);
  audit.parked = Number((await sql<{ n: string }>`SELECT count(*) AS n FROM tether.dead_job`.execute(db)).rows[0]!.n);
  return audit;
}

/** The audit reduced to what a scenario asserts on. */
export function auditSummary(a: Audit): { lost: number; stale: number; duplicates: number; jobs: number; parked: number } {
  return { lost: a.lost.length, stale: a.stale.length, duplicates: a.duplicates.length, jobs: a.jobs, parked: a.parked };
}
