import { sql, type Kysely } from "kysely";
import { createWriter, Drainer, enqueueReindex } from "@tether/core";
import { WRITER_SETTING } from "@tether/core/internal";
import { annotations } from "@tether/annotations";
import { resetIndex } from "../annotation-data.js";
import { countMatching, type BenchSink } from "../bench-engine.js";
import type { BenchDatabase, BenchScope } from "../bench-scope.js";
import { compare, type ResultRow } from "../report.js";
import { BIG_AUTHOR, clearFanoutWork, jobCount } from "./fanout-authors.js";

const author = annotations.embeds.author;

/** A rename the capture trigger does not see (the writer's hand-shake set by hand): no document is reached. */
async function renameUnseen(db: Kysely<any>, displayName: string): Promise<void> {
  await db.transaction().execute(async (trx) => {
    await sql`SELECT set_config(${WRITER_SETTING}, ${author.path}, true)`.execute(trx);
    await sql`UPDATE annotation_user SET display_name = ${displayName} WHERE userid = ${BIG_AUTHOR}`.execute(trx);
  });
}

/**
 * Time from a rename's commit until every one of the author's `n` documents in the engine carries
 * the new name (the drainer's expansion, then its sync passes, to an empty queue), against a
 * re-index of the same `n` documents: the same rename unseen by capture, then
 * `enqueueReindex(user, force)` and the same drainer to an empty queue. The documents exist
 * beforehand, with the old name, in both.
 */
export async function timeToRight(scope: BenchScope, d: BenchDatabase, sink: BenchSink, n: number): Promise<ResultRow[]> {
  const writer = createWriter({});
  const drain = async () => {
    const r = await new Drainer({ db: d.db, sink, collections: [annotations], batchSize: 2500, concurrency: 2 }).drainUntilEmpty();
    if (r.error || r.parked > 0) throw new Error(`drain failed: ${r.error ?? JSON.stringify(r)}`);
    return r;
  };
  const check = async (token: string, what: string) => {
    const left = (await jobCount(d.db, annotations.jobName)) + (await jobCount(d.db, annotations.fanoutJobName!));
    const right = await countMatching(sink, annotations.index, "user_display_name", token);
    if (left > 0 || right !== n) throw new Error(`${what}: ${right}/${n} documents carry the new name, ${left} job(s) left`);
  };
  // The documents, with the author's current name.
  await clearFanoutWork(d.db);
  await resetIndex(sink, annotations.index);
  await enqueueReindex(d.db, annotations, { scope: "user", value: BIG_AUTHOR });
  await drain();
  const fanout: number[] = [];
  const reindex: number[] = [];
  for (let rep = 0; rep < scope.sizes.reps; rep++) {
    for (const first of rep % 2 === 0 ? [true, false] : [false, true]) {
      await clearFanoutWork(d.db);
      const token = `r${rep}${first ? "f" : "i"}`;
      const t = performance.now();
      if (first) await writer.updateWithJob(d.db, author, BIG_AUTHOR, { display_name: `Author ${token}` });
      else {
        await renameUnseen(d.db, `Author ${token}`);
        await enqueueReindex(d.db, annotations, { scope: "user", value: BIG_AUTHOR, force: true });
      }
      await drain();
      (first ? fanout : reindex).push((performance.now() - t) / 1000);
      await check(token, first ? "after the fan-out" : "after the re-index");
    }
    scope.log(`time to right, rep ${rep + 1}: fan-out ${fanout.at(-1)!.toFixed(1)} s vs re-index ${reindex.at(-1)!.toFixed(1)} s`);
  }
  return [
    compare({
      bench: "fanout",
      metric: `rename's commit until all ${n} documents are right`,
      unit: "s",
      better: "lower",
      tether: fanout,
      baselineName: `re-index drain of the same ${n}`,
      baseline: reindex,
      note: `tether: writer.updateWithJob(author embed) then Drainer.drainUntilEmpty (batch 2500, concurrency 2; fan-out chunks of 10000 expanded in the passes) with the real sink; baseline: the same rename unseen by capture, enqueueReindex(user, force) and the same drain; documents present with the old name before each; order alternates`,
      goal: { op: "<=", value: 1.2 },
    }),
  ];
}
