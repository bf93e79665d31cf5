import { finishRebuild, rebuildIndex, type RebuildResult } from "@tether/core";
import { plainAnnotations } from "../plain-annotations.js";
import { resetIndex } from "../annotation-data.js";
import { countDocs, deleteIndex, rawBulk } from "../bench-engine.js";
import { currentAnnotations } from "../current-annotations.js";
import type { Benchmark } from "../benchmark.js";
import { compare } from "../report.js";

const RAW_INDEX = "raw_rebuild";

const secs = (ms: number) => `${(ms / 1000).toFixed(1)} s`;

/**
 * `tether rebuild` of N rows (new index, bulk load, verify passes with the lane paused, atomic
 * swap) against the client's own `helpers.bulk` of the same documents into a fresh index: the
 * time a team would spend re-creating the index by hand, with none of the proof.
 */
export const rebuild: Benchmark = {
  name: "rebuild",
  title: "zero-downtime rebuild (load + verify + swap) vs helpers.bulk of the same rows",
  sinks: ["elasticsearch", "opensearch"],
  async run(scope) {
    const n = scope.sizes.rebuildDocs;
    const { d, sink } = await currentAnnotations(scope, n);
    const tether: number[] = [];
    const raw: number[] = [];
    const rawTuned: number[] = [];
    const results: RebuildResult[] = [];
    try {
      for (let rep = 0; rep < scope.sizes.reps; rep++) {
        const bulk = async (tuned: boolean) => {
          await resetIndex(sink, RAW_INDEX);
          // Tuned as the rebuild's load is: no refresh and an async translog while nobody reads the index.
          if (tuned) await sink.setBulkLoading(RAW_INDEX, true);
          const started = performance.now();
          const r = await rawBulk(sink, RAW_INDEX, d.db);
          const ms = performance.now() - started;
          if (r.docs !== n || r.failed > 0) throw new Error(`helpers.bulk wrote ${r.docs}/${n} (${r.failed} failed)`);
          await deleteIndex(sink, RAW_INDEX);
          return ms;
        };
        const rawMs = await bulk(false);
        const rawTunedMs = await bulk(true);

        let t = performance.now();
        t = performance.now();
        const rebuilt = await rebuildIndex(d.db, sink, plainAnnotations);
        const rebuildMs = performance.now() - t;
        if (rebuilt.rowsLoaded !== n) throw new Error(`the rebuild loaded ${rebuilt.rowsLoaded}/${n} rows`);
        const docs = await countDocs(sink, plainAnnotations.index);
        if (docs !== n) throw new Error(`after the rebuild the alias serves ${docs}/${n} documents`);
        await finishRebuild(d.db, sink, plainAnnotations);
        results.push(rebuilt);
        raw.push(n / (rawMs / 1000));
        rawTuned.push(n / (rawTunedMs / 1000));
        tether.push(n / (rebuildMs / 1000));
        scope.log(
          `rep ${rep + 1}: rebuild ${secs(rebuildMs)} (load ${secs(rebuilt.loadMs)}, verify ${secs(rebuilt.catchUpMs)} in ${rebuilt.catchUpRounds} pass(es), swap ${Math.round(rebuilt.swapMs)} ms, rest ${secs(rebuildMs - rebuilt.loadMs - rebuilt.catchUpMs - rebuilt.swapMs)}), helpers.bulk ${secs(rawMs)}, with refresh off ${secs(rawTunedMs)}`,
        );
      }
    } finally {
      await deleteIndex(sink, plainAnnotations.index);
    }
    const mean = (f: (r: RebuildResult) => number) => results.reduce((a, r) => a + f(r), 0) / results.length;
    const total = mean((r) => r.durationMs);
    const share = (x: number) => `${Math.round((100 * x) / total)}%`;
    return {
      rows: [
        compare({
          bench: "rebuild",
          metric: `rebuild of N=${n} rows incl. verify vs a tuned bulk (goal ≥ 0.8× = time ≤ 1.25×)`,
          unit: "rows/s",
          better: "higher",
          tether,
          baselineName: "helpers.bulk into a new index, refresh off, async translog",
          baseline: rawTuned,
        }),
        compare({
          bench: "rebuild",
          metric: `rebuild of N=${n} rows incl. verify vs a default bulk`,
          unit: "rows/s",
          better: "higher",
          tether,
          baselineName: "helpers.bulk into a new index, default settings",
          baseline: raw,
          note: `where the rebuild's time went (mean): load ${share(mean((r) => r.loadMs))}, verify passes ${share(mean((r) => r.catchUpMs))}, swap ${share(mean((r) => r.swapMs))}, the rest (set-up, resuming the lane) ${share(total - mean((r) => r.loadMs + r.catchUpMs + r.swapMs))}`,
        }),
      ],
      info: { rows: n, results },
    };
  },
};
