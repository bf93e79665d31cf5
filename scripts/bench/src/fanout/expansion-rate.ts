import { sql, type RawBuilder } from "kysely";
import { createWriter, embedJobTag } from "@tether/core";
import { Drainer, expandFanouts, WRITER_SETTING } from "@tether/core/internal";
import { annotations } from "@tether/annotations";
import type { BenchDatabase, BenchScope } from "../bench-scope.js";
import { NoopSink } from "../noop-sink.js";
import { compare, type CompareInput, type ResultRow } from "../report.js";
import { BIG_AUTHOR, clearFanoutWork, jobCount } from "./fanout-authors.js";

const author = annotations.embeds.author;

/**
 * The drainer's expansion of one rename's fan-out to `n` documents (expandFanouts with the
 * drainer's defaults, one transaction per chunk, until the fan-out job is finished: each document
 * locked, its version bumped and a sync job enqueued) against one raw `INSERT INTO tether.job …
 * SELECT` of the same sync jobs, and against the same with the documents' versions bumped (one
 * statement, one transaction). Nothing drains the sync jobs: the expansion alone is timed.
 */
export async function expansionRate(scope: BenchScope, d: BenchDatabase, n: number): Promise<ResultRow[]> {
  const writer = createWriter({});
  const { options: o } = new Drainer({ db: d.db, sink: new NoopSink(), collections: [annotations] });
  const expand = async (): Promise<number> => {
    await writer.updateWithJob(d.db, author, BIG_AUTHOR, { display_name: `Renamed ${Date.now()}` });
    let expanded = 0;
    let chunks = 0;
    const t = performance.now();
    for (;;) {
      const r = await expandFanouts({ db: d.db, collections: [annotations], chunkSize: o.fanoutChunkSize, claimLimit: o.batchSize, deadlineMs: o.deadlineMs, maxAttempts: o.maxAttempts, backoff: o.backoff, logger: o.logger });
      if (r.retried > 0 || r.parked > 0) throw new Error(`the expansion failed: ${JSON.stringify(r)}`);
      expanded += r.expanded;
      chunks += 1;
      if (r.claimed === 0 || (r.finished > 0 && !r.more)) break;
    }
    const ms = performance.now() - t;
    const enqueued = await jobCount(d.db, annotations.jobName);
    if (expanded !== n || enqueued !== n || (await jobCount(d.db, annotations.fanoutJobName!)) !== 0) throw new Error(`the fan-out expanded ${expanded} documents into ${enqueued} jobs in ${chunks} chunks, expected ${n}`);
    return n / (ms / 1000);
  };
  const via = JSON.stringify({ table: author.table, column: author.linkColumn, value: BIG_AUTHOR, fanout: "0" });
  const jobs = (from: RawBuilder<unknown>) => sql`
    INSERT INTO tether.job (name, scheduled_at, priority, tag, kwargs)
    SELECT ${annotations.jobName}, now(), ${author.priority}, ${embedJobTag(author, "update")}, jsonb_build_object('id', a.id::text, 'via', ${via}::jsonb)
    FROM ${from}`;
  const raw = (bump: boolean) => async (): Promise<number> => {
    const t = performance.now();
    const r = await d.db.transaction().execute(async (trx) => {
      if (!bump) return jobs(sql`annotation a WHERE a.userid = ${BIG_AUTHOR} AND a.deleted_at IS NULL`).execute(trx);
      // As tether's expansion does, out of the capture triggers' way.
      await sql`SELECT set_config(${WRITER_SETTING}, ${annotations.name}, true)`.execute(trx);
      return sql`
        WITH a AS (
          UPDATE annotation t SET version = tether.next_version(t.version) WHERE t.userid = ${BIG_AUTHOR} AND t.deleted_at IS NULL RETURNING t.id
        ) ${jobs(sql`a`)}`.execute(trx);
    });
    const ms = performance.now() - t;
    if (Number(r.numAffectedRows ?? 0) !== n) throw new Error(`INSERT … SELECT enqueued ${r.numAffectedRows}, expected ${n}`);
    return n / (ms / 1000);
  };
  const variants = { tether: expand, insert: raw(false), bumpAndInsert: raw(true) };
  type V = keyof typeof variants;
  const rates = { tether: [] as number[], insert: [] as number[], bumpAndInsert: [] as number[] };
  for (let rep = 0; rep < scope.sizes.reps; rep++) {
    // Each in turn goes first.
    const order = (Object.keys(variants) as V[]).map((_, k, all) => all[(k + rep) % all.length]!);
    for (const v of order) {
      await clearFanoutWork(d.db);
      rates[v].push(await variants[v]());
    }
    scope.log(`expansion, rep ${rep + 1}: ${rates.tether.at(-1)!.toFixed(0)} vs INSERT … SELECT ${rates.insert.at(-1)!.toFixed(0)}, bump + INSERT … SELECT ${rates.bumpAndInsert.at(-1)!.toFixed(0)} jobs/s`);
  }
  await clearFanoutWork(d.db);
  const row = (baselineName: string, baseline: number[], more: Pick<CompareInput, "note" | "goal">) =>
    compare({ bench: "fanout", metric: `expansion of a fan-out to ${n} documents`, unit: "jobs/s", better: "higher", tether: rates.tether, baselineName, baseline, ...more });
  return [
    row("raw INSERT … SELECT, same jobs", rates.insert, {
      note: `expandFanouts with the drainer's defaults (chunks of ${o.fanoutChunkSize}, each its own transaction: claim the fan-out job, lock the next chunk of the author's annotations in id order, bump their versions, enqueue their sync jobs, save the progress) until the fan-out job is finished; the baseline enqueues the same sync jobs (same name, priority, tag and kwargs) in one statement, without bumping; each variant goes first in turn`,
      goal: { op: ">=", value: 0.8 },
    }),
    row("raw bump + INSERT … SELECT in one statement", rates.bumpAndInsert, {
      note: "the work a hand-written fan-out must do to keep versions right: every document's version bumped (tether.next_version) and its sync job enqueued, in one statement and one transaction over all of them; the ratio is what chunking, locking in id order and saving progress cost",
    }),
  ];
}
