import { sql } from "kysely";
import { enqueueReindex } from "@tether/core";
import { plainAnnotations } from "../plain-annotations.js";
import { seedAnnotations } from "../annotation-data.js";
import type { Benchmark } from "../benchmark.js";
import { drainVsBulk, idleDrainer, timeSplit } from "../drain-vs-bulk.js";
import type { DrainChildResult } from "../drain-child-process.js";
import { compare } from "../report.js";

export const reindexDrain: Benchmark = {
  name: "reindex",
  title: "Re-index-all drain (real Elasticsearch sink) vs raw helpers.bulk of the same documents",
  sinks: ["elasticsearch", "opensearch"],
  async run(scope) {
    const n = scope.sizes.reindexDocs;
    const d = await scope.database();
    const sink = scope.engineSink();
    await seedAnnotations(d.db, n);
    const drain: number[] = [];
    const bulk: number[] = [];
    const peakMb: number[] = [];
    const children: DrainChildResult[] = [];
    for (let rep = 0; rep < scope.sizes.reps; rep++) {
      await sql`VACUUM ANALYZE tether.job`.execute(d.db);
      const e = await enqueueReindex(d.db, plainAnnotations, { scope: "all" });
      if (e.enqueued !== n) throw new Error(`enqueueReindex enqueued ${e.enqueued}, expected ${n}`);
      const r = await drainVsBulk(scope, d, sink, n, rep % 2 === 1);
      children.push(r.drain);
      drain.push(r.drainRate);
      bulk.push(r.bulkRate);
      peakMb.push(r.drain.peakHwmKb / 1024);
      scope.log(`rep ${rep + 1}: drain ${r.drainRate.toFixed(0)} docs/s in ${r.drain.passes} passes, helpers.bulk ${r.bulkRate.toFixed(0)} docs/s, drainer VmHWM ${(r.drain.peakHwmKb / 1024).toFixed(0)} MB`);
    }
    const idle = await idleDrainer(scope, d);
    const idleMb = peakMb.map(() => idle.peakHwmKb / 1024);
    return {
      rows: [
        compare({
          bench: "2 reindex",
          metric: `re-index-all drain, N=${n}`,
          unit: "docs/s",
          better: "higher",
          tether: drain,
          baselineName: "helpers.bulk, same docs",
          baseline: bulk,
          note: `drain = enqueueReindex(scope all) then Drainer.drainUntilEmpty (batch 2500, 2 passes writing and one batch ahead: _mget verify, bulk with external versions, _mget read-back of versions only (a full read for refused writes and versions that differ), delete) in a child process; helpers.bulk defaults (5 MB flushes, concurrency 5) streaming the rows from Postgres; index recreated before each; order alternates; ${timeSplit(children)}`,
        }),
        compare({
          bench: "2 reindex",
          metric: "drainer peak RSS (VmHWM)",
          unit: "MB",
          better: "lower",
          tether: peakMb,
          baselineName: "same process, idle",
          baseline: idleMb,
          note: "VmHWM of the drainer child process at exit vs the same process loaded and connected without draining",
        }),
      ],
      info: { docs: n, drains: children },
    };
  },
};
