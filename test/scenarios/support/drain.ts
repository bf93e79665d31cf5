import { sql, type Kysely } from "kysely";
import type { DrainResult, Drainer } from "@tether/core";

/**
 * Runs drain passes until tether.job is empty, waiting out backoffs of retried jobs (polling
 * when the next job is not due yet). Throws with the leftover jobs' last errors on timeout.
 */
export async function drainToEmpty(drainer: Drainer, db: Kysely<any>, opts: { timeoutMs?: number } = {}): Promise<DrainResult[]> {
  const deadline = Date.now() + (opts.timeoutMs ?? 60_000);
  const passes: DrainResult[] = [];
  for (;;) {
    const r = await drainer.drainOnce();
    passes.push(r);
    const left = await sql<{ n: string; due_in_ms: string | null }>`
      SELECT count(*) AS n, greatest(0, extract(epoch FROM min(scheduled_at) - now()) * 1000)::bigint::text AS due_in_ms
      FROM tether.job`.execute(db);
    const n = Number(left.rows[0]!.n);
    if (n === 0) return passes;
    if (Date.now() > deadline) {
      const errs = await sql<{ last_error: string | null }>`SELECT last_error FROM tether.job LIMIT 5`.execute(db);
      throw new Error(`${n} jobs left after ${passes.length} passes: ${JSON.stringify(errs.rows.map((e) => e.last_error))}`);
    }
    if (r.claimed === 0 || r.error) {
      const wait = Math.min(Number(left.rows[0]!.due_in_ms ?? 0), 1_000);
      await new Promise((res) => setTimeout(res, Math.max(wait, 20)));
    }
  }
}
