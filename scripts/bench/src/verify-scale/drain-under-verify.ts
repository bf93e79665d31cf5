import { sql, type Kysely } from "kysely";
import { Drainer, type Collection } from "@tether/core";
import { silentLogger, VerifyScheduler } from "@tether/core/internal";
import type { BenchSink } from "../bench-engine.js";
import { waitFor } from "../benchmark.js";
import type { ScaleItemRow } from "./scale-items.js";

export interface DrainFigure {
  /** Jobs drained per second. */
  jobsPerSecond: number;
  /** Entities the scheduled verify compared while the drain ran (0 without it). */
  verified: number;
}

/**
 * Drains `n` re-index jobs of the integer-id collection, items (after, after + n]: their versions
 * are bumped first, so each job writes its document. With `verifying`, a scheduled fast verify
 * of the same collection (the maintenance leader's `VerifyScheduler`, default pace) runs from
 * before the drain starts until it ends.
 */
export async function drainUnderVerify(db: Kysely<any>, sink: BenchSink, collection: Collection<ScaleItemRow>, after: number, n: number, verifying: boolean): Promise<DrainFigure> {
  const table = sql.table(collection.table);
  await sql`UPDATE ${table} SET version = version + 1 WHERE id > ${after} AND id <= ${after + n}`.execute(db);
  await sql`
    INSERT INTO tether.job (name, priority, tag, kwargs)
    SELECT ${collection.jobName}, 1000, 'reindex', jsonb_build_object('id', id::text) FROM ${table} WHERE id > ${after} AND id <= ${after + n}`.execute(db);
  await sql`ANALYZE tether.job`.execute(db);

  let windows = 0;
  let compared = 0;
  const logger = { ...silentLogger, debug: (obj: object) => ((windows += 1), (compared = (obj as { documentsThisProcess: number }).documentsThisProcess)) };
  const stop = new AbortController();
  let verify: Promise<unknown> = Promise.resolve();
  if (verifying) {
    await sql`DELETE FROM tether.verify_run`.execute(db);
    verify = new VerifyScheduler(db, sink, [collection], { deepIntervalMs: 0 }, logger).runDue(stop.signal).catch(() => undefined);
    await waitFor(async () => windows > 0, "the scheduled verify's first window", 120_000);
  }
  const before = compared;
  const t = performance.now();
  const r = await new Drainer({ db, sink, collections: [collection], concurrency: 2 }).drainUntilEmpty();
  const ms = performance.now() - t;
  const during = compared - before;
  stop.abort();
  await verify;
  if (verifying) await sql`DELETE FROM tether.verify_run`.execute(db);
  if (r.error || r.repaired !== n) throw new Error(`drain repaired ${r.repaired}/${n}: ${r.error ?? JSON.stringify(r)}`);
  return { jobsPerSecond: n / (ms / 1000), verified: during };
}
