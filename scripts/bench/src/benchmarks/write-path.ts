import type { Kysely } from "kysely";
import { createWriter } from "@tether/core";
import { annotations, type AnnotationRow } from "@tether/annotations";
import { documentMeta, type ElasticsearchSink } from "@tether/elasticsearch";
import { resetIndex } from "../annotation-data.js";
import type { Benchmark } from "../benchmark.js";
import { compare, type ResultRow } from "../report.js";
import { percentiles } from "../stats.js";

const WARMUP = 20;

const values = (i: number) => ({
  userid: `acct:writer${i % 100}@example.com`,
  target_uri: `https://example.com/w/${i % 1000}`,
  text: `written by the write-path benchmark, request ${i}`,
  tags: ["bench"],
});

async function plainInsert(db: Kysely<any>, i: number): Promise<AnnotationRow> {
  return db.transaction().execute(
    async (trx) => (await trx.insertInto("annotation").values({ ...values(i), version: 1 }).returningAll().executeTakeFirstOrThrow()) as AnnotationRow,
  );
}

async function plainIndex(sink: ElasticsearchSink, row: AnnotationRow): Promise<void> {
  await sink.client.index({
    index: sink.indexName(annotations.index),
    id: row.id,
    version: 1,
    version_type: "external",
    document: { ...annotations.toDocument(row), tether: documentMeta(row.id, 1, false) },
  });
}

export const writePath: Benchmark = {
  name: "write",
  title: "Write path: createWithJob vs the plain insert, without and with the direct sync",
  async run(scope) {
    const m = scope.sizes.writeSamples;
    const d = await scope.database();
    const sink = scope.sink();
    await resetIndex(sink, annotations.index);
    const noSync = createWriter({});
    const withSync = createWriter({ sink });
    let i = 0;
    let syncFailures = 0;
    const variants = {
      jobNoSync: async () => void (await noSync.createWithJob(d.db, annotations, values(i++))),
      plainTx: async () => void (await plainInsert(d.db, i++)),
      jobSync: async () => {
        const r = await withSync.createWithJob(d.db, annotations, values(i++));
        if (r.sync !== "ok") syncFailures++;
      },
      plainIndex: async () => plainIndex(sink, await plainInsert(d.db, i++)),
    };
    type V = keyof typeof variants;
    const names = Object.keys(variants) as V[];
    const perRep: Record<V, { p50: number; p99: number }[]> = { jobNoSync: [], plainTx: [], jobSync: [], plainIndex: [] };
    for (let w = 0; w < WARMUP; w++) for (const v of names) await variants[v]();
    for (let rep = 0; rep < scope.sizes.reps; rep++) {
      const lat: Record<V, number[]> = { jobNoSync: [], plainTx: [], jobSync: [], plainIndex: [] };
      // Interleaved, one request at a time, so every variant sees the same background noise.
      for (let k = 0; k < m; k++) {
        for (const v of names) {
          const t = performance.now();
          await variants[v]();
          lat[v].push(performance.now() - t);
        }
      }
      for (const v of names) perRep[v].push(percentiles(lat[v]));
      scope.log(`rep ${rep + 1}: p50 ms ${names.map((v) => `${v} ${perRep[v].at(-1)!.p50.toFixed(2)}`).join(", ")}`);
    }
    const rows: ResultRow[] = [];
    const pairs: [V, V, string, string][] = [
      ["jobNoSync", "plainTx", "createWithJob, no direct sync", "same insert txn without job"],
      ["jobSync", "plainIndex", "createWithJob + direct sync", "insert txn + client.index"],
    ];
    for (const [a, b, metric, baselineName] of pairs) {
      for (const p of ["p50", "p99"] as const) {
        rows.push(
          compare({
            bench: "4 write",
            metric: `${metric} ${p}`,
            unit: "ms",
            better: "lower",
            tether: perRep[a].map((x) => x[p]),
            baselineName,
            baseline: perRep[b].map((x) => x[p]),
            ...(p === "p50" && a === "jobNoSync" ? { note: `${m} sequential requests per variant per repetition, variants interleaved; percentiles per repetition, then median [min–max] across repetitions` } : {}),
            ...(p === "p50" && a === "jobSync" ? { note: `direct sync = one _bulk with external version, timeout 500 ms; ${syncFailures} of ${m * scope.sizes.reps} direct syncs did not report ok` } : {}),
          }),
        );
      }
    }
    return { rows, info: { samplesPerRep: m, syncFailures } };
  },
};
