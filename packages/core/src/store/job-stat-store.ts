import { sql, type Kysely } from "kysely";
import type { CompletionOutcome } from "../job.js";
import { instant, pinnedClock as at } from "./pinned-clock.js";

/** Every SQL statement on tether.job_stat (append-only completion counts) lives here. */

type Db = Kysely<any>;

/** Outcomes that mean a job was confirmed in sync (parked and expired are failures). */
export const CONFIRMED_OUTCOMES: readonly CompletionOutcome[] = ["up_to_date", "repaired", "deleted_downstream", "forced", "expanded"];

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

/** Confirmed completions recorded in tether.job_stat with `since < at <= now`. */
export async function confirmedCompletions(db: Db, since: Date, opts: { now?: Date } = {}): Promise<number> {
  const r = await sql<{ n: string | null }>`
    SELECT sum(count) AS n FROM tether.job_stat
    WHERE at > ${instant(since)} AND at <= ${at(opts.now)}
      AND outcome = ANY(${[...CONFIRMED_OUTCOMES]}::text[])`.execute(db);
  return Number(r.rows[0]?.n ?? 0);
}

/** Deletes up to `limit` counts older than `retentionDays`; returns how many. */
export async function pruneJobStats(db: Db, opts: { retentionDays: number; limit: number; now?: Date }): Promise<number> {
  const r = await sql`
    DELETE FROM tether.job_stat WHERE ctid = ANY(ARRAY(
      SELECT ctid FROM tether.job_stat WHERE at < ${at(opts.now)} - ${opts.retentionDays} * interval '1 day' LIMIT ${opts.limit}))`.execute(db);
  return Number(r.numAffectedRows ?? 0);
}
