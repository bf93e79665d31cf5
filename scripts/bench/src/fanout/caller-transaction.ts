import { createWriter } from "@tether/core";
import { annotations } from "@tether/annotations";
import type { BenchDatabase, BenchScope } from "../bench-scope.js";
import { compare, type ResultRow } from "../report.js";
import { percentiles } from "../stats.js";
import { BIG_AUTHOR, jobCount, renameBySql, SMALL_AUTHOR, SMALL_FANOUT } from "./fanout-authors.js";

const WARMUP = 20;

/**
 * The caller's transaction for a rename that fans out to `n` documents against one that fans out
 * to 10, by both paths a change takes: the writer's verb on the embed (`updateWithJob`, its own
 * transaction) and a plain `UPDATE` with capture on (the statement-level trigger). Each records
 * one change and one fan-out job, whatever the number of documents: the ratio should read 1.
 */
export async function callerTransaction(scope: BenchScope, d: BenchDatabase, n: number): Promise<ResultRow[]> {
  const writer = createWriter({});
  let i = 0;
  const name = () => `Author ${i++}`;
  const variants = {
    writerBig: () => writer.updateWithJob(d.db, annotations.embeds.author, BIG_AUTHOR, { display_name: name() }),
    writerSmall: () => writer.updateWithJob(d.db, annotations.embeds.author, SMALL_AUTHOR, { display_name: name() }),
    sqlBig: () => renameBySql(d.db, BIG_AUTHOR, name()),
    sqlSmall: () => renameBySql(d.db, SMALL_AUTHOR, name()),
  };
  type V = keyof typeof variants;
  const names = Object.keys(variants) as V[];
  const m = scope.sizes.writeSamples;
  const p50 = Object.fromEntries(names.map((v) => [v, []])) as unknown as Record<V, number[]>;
  for (let w = 0; w < WARMUP; w++) for (const v of names) await variants[v]();
  for (let rep = 0; rep < scope.sizes.reps; rep++) {
    const lat = Object.fromEntries(names.map((v) => [v, []])) as unknown as Record<V, number[]>;
    for (let k = 0; k < m; k++) {
      // Alternating the order, so that neither size always runs after the other.
      for (const v of (k + rep) % 2 === 0 ? names : [...names].reverse()) {
        const t = performance.now();
        await variants[v]();
        lat[v].push(performance.now() - t);
      }
    }
    for (const v of names) p50[v].push(percentiles(lat[v]).p50);
    scope.log(`caller's transaction, rep ${rep + 1}: p50 ms ${names.map((v) => `${v} ${p50[v].at(-1)!.toFixed(2)}`).join(", ")}`);
  }
  // Every rename enqueued exactly one fan-out job (nothing drains them here).
  const calls = (WARMUP + m * scope.sizes.reps) * names.length;
  const fanouts = await jobCount(d.db, annotations.fanoutJobName!);
  if (fanouts !== calls) throw new Error(`${calls} renames enqueued ${fanouts} fan-out jobs`);
  const row = (path: string, big: V, small: V, note: string) =>
    compare({
      bench: "fanout",
      metric: `caller's transaction p50, ${path}: fan-out to ${n} vs ${SMALL_FANOUT}`,
      unit: "ms",
      better: "lower",
      tether: p50[big],
      baselineName: `the same, fan-out to ${SMALL_FANOUT}`,
      baseline: p50[small],
      note,
      goal: { op: "<=", value: 1.2 },
    });
  return [
    row("writer.updateWithJob on the embed", "writerBig", "writerSmall", `${m} renames per size and repetition, interleaved; BEGIN, the annotation_user row locked and updated, one tether.embed_change upsert and one fan-out job, COMMIT`),
    row("plain UPDATE, capture on", "sqlBig", "sqlSmall", "UPDATE annotation_user SET display_name = … WHERE userid = … (autocommit); the statement-level trigger upserts the change and enqueues the fan-out job"),
  ];
}
