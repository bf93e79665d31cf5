import { sql } from "kysely";
import { enqueueReindex } from "@tether/core";
import { plainAnnotations } from "../plain-annotations.js";
import { seedAnnotations } from "../annotation-data.js";
import type { Benchmark } from "../benchmark.js";
import { compare } from "../report.js";

export const adminEnqueue: Benchmark = {
  name: "enqueue",
  title: "Admin enqueue: enqueueReindex (INSERT … SELECT) vs the same INSERT … SELECT into an unindexed table",
  async run(scope) {
    const n = scope.sizes.enqueueRows;
    const d = await scope.database();
    await seedAnnotations(d.db, n);
    // Same columns, defaults and identity; no primary key, no indexes, no check constraints.
    await sql`CREATE TABLE bench_plain_job (LIKE tether.job INCLUDING DEFAULTS INCLUDING IDENTITY)`.execute(d.db);
    const tether: number[] = [];
    const raw: number[] = [];
    for (let rep = 0; rep < scope.sizes.reps; rep++) {
      await sql`TRUNCATE tether.job, bench_plain_job`.execute(d.db);
      await sql`CHECKPOINT`.execute(d.db);
      const runTether = async () => {
        const t = performance.now();
        const r = await enqueueReindex(d.db, plainAnnotations, { scope: "all" });
        const ms = performance.now() - t;
        if (r.enqueued !== n) throw new Error(`enqueued ${r.enqueued}/${n}`);
        tether.push(n / (ms / 1000));
      };
      const runRaw = async () => {
        const t = performance.now();
        const r = await sql`
          INSERT INTO bench_plain_job (name, priority, tag, kwargs)
          SELECT ${plainAnnotations.jobName}, 1000, 'reindex', jsonb_build_object('id', s.id)
          FROM (SELECT t.id::text AS id FROM annotation AS t) AS s`.execute(d.db);
        const ms = performance.now() - t;
        if (Number(r.numAffectedRows) !== n) throw new Error(`raw insert wrote ${r.numAffectedRows}/${n}`);
        raw.push(n / (ms / 1000));
      };
      if (rep % 2 === 0) {
        await runTether();
        await runRaw();
      } else {
        await runRaw();
        await runTether();
      }
      scope.log(`rep ${rep + 1}: enqueueReindex ${tether.at(-1)!.toFixed(0)} rows/s, plain ${raw.at(-1)!.toFixed(0)} rows/s`);
    }
    return {
      rows: [
        compare({
          bench: "5 enqueue",
          metric: `enqueueReindex(all), N=${n}`,
          unit: "jobs/s",
          better: "higher",
          tether,
          baselineName: "INSERT…SELECT, unindexed",
          baseline: raw,
          note: "both one statement in autocommit; tether.job carries its primary key, claim and expiry indexes and checks, the copy (LIKE … INCLUDING DEFAULTS INCLUDING IDENTITY) none; tables truncated and CHECKPOINT before each repetition; order alternates",
        }),
      ],
      info: { rows: n },
    };
  },
};
