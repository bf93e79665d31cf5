import { sql, type Kysely } from "kysely";
import { plainAnnotations } from "./plain-annotations.js";
import { resetIndex } from "./annotation-data.js";
import type { BenchSink } from "./bench-engine.js";
import type { BenchDatabase, BenchScope } from "./bench-scope.js";
import { runDrainChild, type DrainChildResult } from "./drain-child-process.js";
import { compare, type ResultRow } from "./report.js";

/** The size the 1M drain is compared against (memory flat, time linear). */
export const SCALE_BASE = 100_000;

/** Whether a backlog of `n` is large enough (`--full`) for the growth figures. */
export function measuresScale(n: number): boolean {
  return n >= 10 * SCALE_BASE;
}

/** One drain of SCALE_BASE jobs into an empty index, in the drainer child (its peak RSS is its own). */
export async function baseDrain(scope: BenchScope, d: BenchDatabase, sink: BenchSink, enqueue: (db: Kysely<any>, n: number) => Promise<void>): Promise<DrainChildResult> {
  await sql`TRUNCATE tether.job`.execute(d.db);
  await enqueue(d.db, SCALE_BASE);
  await resetIndex(sink, plainAnnotations.index);
  await sql`ANALYZE tether.job`.execute(d.db);
  const r = await runDrainChild({ databaseUrl: d.url, sinkKind: scope.env.sinkKind, elasticsearchUrl: scope.env.esUrl, indexPrefix: scope.indexPrefix, mode: "drain" });
  if (!r.counts || r.counts.error || r.counts.repaired !== SCALE_BASE) throw new Error(`the ${SCALE_BASE}-job drain did not repair every document: ${JSON.stringify(r.counts)}`);
  scope.log(`scale base: drained ${SCALE_BASE} in ${(r.durationMs / 1000).toFixed(1)} s, maxRSS ${(r.maxRssKb / 1024).toFixed(0)} MB`);
  return r;
}

/** Peak RSS of the large drains against the base one (goal ≤ 1.2×), and drain time against 10 × the base's (goal: linear, ≈ 1). */
export function scaleRows(bench: string, n: number, large: readonly DrainChildResult[], base: DrainChildResult): ResultRow[] {
  const factor = n / SCALE_BASE;
  return [
    compare({
      bench,
      metric: `drainer peak RSS at N=${n} vs N=${SCALE_BASE}`,
      unit: "MB",
      better: "lower",
      tether: large.map((r) => r.maxRssKb / 1024),
      baselineName: `same drain, N=${SCALE_BASE}`,
      baseline: large.map(() => base.maxRssKb / 1024),
      note: "process.resourceUsage().maxRSS of the drainer child at exit; goal: flat, ratio ≤ 1.2",
    }),
    compare({
      bench,
      metric: `drain time at N=${n} vs ${factor} × N=${SCALE_BASE}`,
      unit: "s",
      better: "lower",
      tether: large.map((r) => r.durationMs / 1000),
      baselineName: `${factor} × the N=${SCALE_BASE} drain`,
      baseline: large.map(() => (factor * base.durationMs) / 1000),
      note: "goal: linear growth, ratio ≈ 1 (above 1 = the drain slows down as the backlog grows)",
    }),
  ];
}
