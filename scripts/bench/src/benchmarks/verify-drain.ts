import { sql, type Kysely } from "kysely";
import { Drainer, enqueueReindex } from "@tether/core";
import { plainAnnotations } from "../plain-annotations.js";
import { currentAnnotations } from "../current-annotations.js";
import { rawMget, type BenchSink } from "../bench-engine.js";
import type { Benchmark } from "../benchmark.js";
import { compare } from "../report.js";

const BATCH = 2500;

/**
 * The floor for verifying N up-to-date entities: per batch of 2500, take the next job ids,
 * select the rows, `_mget` the documents, delete the jobs. No version comparison, no stats.
 */
async function rawVerify(db: Kysely<any>, sink: BenchSink): Promise<number> {
  let done = 0;
  for (;;) {
    const n = await db.transaction().execute(async (trx) => {
      const jobs = await sql<{ id: string; entity: string }>`
        SELECT id, kwargs->>'id' AS entity FROM bench_verify_job ORDER BY id LIMIT ${BATCH} FOR UPDATE SKIP LOCKED`.execute(trx);
      if (jobs.rows.length === 0) return 0;
      const ids = jobs.rows.map((j) => j.entity);
      await sql`SELECT * FROM annotation WHERE id = ANY(${ids}::bigint[])`.execute(trx);
      if ((await rawMget(sink, plainAnnotations.index, ids)) !== ids.length) throw new Error("mget returned fewer documents than asked");
      await sql`DELETE FROM bench_verify_job WHERE id = ANY(${jobs.rows.map((j) => j.id)}::bigint[])`.execute(trx);
      return jobs.rows.length;
    });
    if (n === 0) return done;
    done += n;
  }
}

export const verifyDrain: Benchmark = {
  name: "verify",
  title: "Verify-only drain (everything current in the search engine) vs raw _mget + Postgres select/delete",
  sinks: ["elasticsearch", "opensearch"],
  async run(scope) {
    const n = scope.sizes.verifyDocs;
    const { d, sink } = await currentAnnotations(scope, n);
    await sql`CREATE TABLE bench_verify_job (LIKE tether.job INCLUDING DEFAULTS INCLUDING IDENTITY)`.execute(d.db);
    await sql`ALTER TABLE bench_verify_job ADD PRIMARY KEY (id)`.execute(d.db);

    const tether: number[] = [];
    const raw: number[] = [];
    for (let rep = 0; rep < scope.sizes.reps; rep++) {
      await enqueueReindex(d.db, plainAnnotations, { scope: "all" });
      await sql`INSERT INTO bench_verify_job (name, priority, tag, kwargs) SELECT name, priority, tag, kwargs FROM tether.job`.execute(d.db);
      await sql`ANALYZE tether.job`.execute(d.db);
      await sql`ANALYZE bench_verify_job`.execute(d.db);
      const runTether = async () => {
        const t = performance.now();
        const r = await new Drainer({ db: d.db, sink, collections: [plainAnnotations], concurrency: 2 }).drainUntilEmpty();
        const ms = performance.now() - t;
        if (r.error || r.up_to_date !== n) throw new Error(`verify drain confirmed ${r.up_to_date}/${n}: ${r.error ?? JSON.stringify(r)}`);
        tether.push(n / (ms / 1000));
      };
      const runRaw = async () => {
        const t = performance.now();
        const done = await rawVerify(d.db, sink);
        if (done !== n) throw new Error(`raw verify handled ${done}/${n}`);
        raw.push(n / ((performance.now() - t) / 1000));
      };
      if (rep % 2 === 0) {
        await runTether();
        await runRaw();
      } else {
        await runRaw();
        await runTether();
      }
      await sql`VACUUM ANALYZE tether.job`.execute(d.db);
      await sql`VACUUM ANALYZE bench_verify_job`.execute(d.db);
      scope.log(`rep ${rep + 1}: tether ${tether.at(-1)!.toFixed(0)} jobs/s, raw ${raw.at(-1)!.toFixed(0)} jobs/s`);
    }
    return {
      rows: [
        compare({
          bench: "3 verify",
          metric: `verify-only drain, N=${n}`,
          unit: "jobs/s",
          better: "higher",
          tether,
          baselineName: "raw _mget + select/delete",
          baseline: raw,
          note: "all documents current (loaded with their versions beforehand); tether = Drainer.drainUntilEmpty with the real sink (claim, load rows, _mget, compare versions, delete, record stats); raw = per 2500: SELECT … FOR UPDATE SKIP LOCKED of job ids from a copy table, SELECT rows, _mget, DELETE, one transaction",
        }),
      ],
      info: { docs: n },
    };
  },
};
