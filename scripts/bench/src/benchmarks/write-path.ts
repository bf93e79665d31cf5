import { sql, type Kysely } from "kysely";
import { createWriter, nextVersion } from "@tether/core";
import type { AnnotationRow } from "@tether/annotations";
import { plainAnnotations } from "../plain-annotations.js";
import { documentMeta, type ElasticsearchSink } from "@tether/elasticsearch";
import { resetIndex } from "../annotation-data.js";
import type { Benchmark } from "../benchmark.js";
import { compare, type ResultRow } from "../report.js";
import { percentiles } from "../stats.js";

const WARMUP = 20;
/** The order of the variants in each round is random, but the same in every run. */
const ORDER_SEED = 0x5eed;

/** A small deterministic generator (mulberry32): uniform in [0, 1). */
function seededRandom(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = Math.imul(a ^ (a >>> 15), 1 | a);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** A Fisher–Yates shuffle of a copy of `items`. */
function shuffled<T>(items: readonly T[], random: () => number): T[] {
  const out = [...items];
  for (let i = out.length - 1; i > 0; i--) {
    const j = Math.floor(random() * (i + 1));
    [out[i], out[j]] = [out[j]!, out[i]!];
  }
  return out;
}

const values = (i: number) => ({
  userid: `acct:writer${i % 100}@example.com`,
  target_uri: `https://example.com/w/${i % 1000}`,
  text: `written by the write-path benchmark, request ${i}`,
  tags: ["bench"],
});

/** `fn` in a transaction of its own, or alone: one statement, in Postgres's implicit transaction. */
const inTransaction = <T>(db: Kysely<any>, alone: boolean, fn: (q: Kysely<any>) => Promise<T>): Promise<T> => (alone ? fn(db) : db.transaction().execute(fn));

async function plainInsert(db: Kysely<any>, i: number, alone = false): Promise<AnnotationRow> {
  return inTransaction(db, alone, async (q) => (await q.insertInto("annotation").values({ ...values(i), version: nextVersion() }).returningAll().executeTakeFirstOrThrow()) as AnnotationRow);
}

/** A plain update: the same patch and version bump updateWithJob makes, no job. */
async function plainUpdate(db: Kysely<any>, id: string, patch: Record<string, unknown>, alone = false): Promise<void> {
  await inTransaction(db, alone, (q) => q.updateTable("annotation").set({ ...patch, version: nextVersion("version") }).where("id", "=", id).where("deleted_at", "is", null).returningAll().executeTakeFirstOrThrow());
}

/** Rows to update and delete, inserted in one statement. */
async function seedRows(db: Kysely<any>, n: number): Promise<string[]> {
  const r = await sql<{ id: string }>`
    INSERT INTO annotation (userid, target_uri, text, version)
    SELECT 'acct:seed@example.com', 'https://example.com/seed/' || g, 'seeded ' || g, 1 FROM generate_series(1, ${n}) g RETURNING id::text`.execute(db);
  return r.rows.map((x) => x.id);
}

async function plainIndex(sink: ElasticsearchSink, row: AnnotationRow): Promise<void> {
  await sink.client.index({
    index: sink.indexName(plainAnnotations.index),
    id: row.id,
    version: Number(row.version),
    version_type: "external",
    document: { ...plainAnnotations.toDocument(row), tether: documentMeta(row.id, Number(row.version), false) },
  });
}

export const writePath: Benchmark = {
  name: "write",
  title: "Write path: createWithJob, updateWithJob, deleteWithJob vs the same plain statements, without and with the direct sync",
  async run(scope) {
    const m = scope.sizes.writeSamples;
    const d = await scope.database();
    const sink = scope.sink();
    await resetIndex(sink, plainAnnotations.index);
    const noSync = createWriter({});
    const withSync = createWriter({ sink });
    let i = 0;
    let syncFailures = 0;
    // Each update and delete variant takes live rows of its own.
    const total = (WARMUP + m * scope.sizes.reps) * 6;
    const seeded = await seedRows(d.db, total);
    const take = () => seeded.pop()!;
    const variants = {
      jobNoSync: async () => void (await noSync.createWithJob(d.db, plainAnnotations, values(i++))),
      plainTx: async () => void (await plainInsert(d.db, i++)),
      plainAlone: async () => void (await plainInsert(d.db, i++, true)),
      jobSync: async () => {
        const r = await withSync.createWithJob(d.db, plainAnnotations, values(i++));
        if (r.sync !== "ok") syncFailures++;
      },
      plainIndex: async () => plainIndex(sink, await plainInsert(d.db, i++)),
      updateNoSync: async () => void (await noSync.updateWithJob(d.db, plainAnnotations, take(), { text: `edited ${i++}` })),
      plainUpdate: async () => plainUpdate(d.db, take(), { text: `edited ${i++}` }),
      plainUpdateAlone: async () => plainUpdate(d.db, take(), { text: `edited ${i++}` }, true),
      deleteNoSync: async () => void (await noSync.deleteWithJob(d.db, plainAnnotations, take())),
      plainDelete: async () => plainUpdate(d.db, take(), { deleted_at: sql`now()` }),
      plainDeleteAlone: async () => plainUpdate(d.db, take(), { deleted_at: sql`now()` }, true),
    };
    type V = keyof typeof variants;
    const names = Object.keys(variants) as V[];
    const perRep = Object.fromEntries(names.map((v) => [v, []])) as unknown as Record<V, { p50: number; p99: number }[]>;
    for (let w = 0; w < WARMUP; w++) for (const v of names) await variants[v]();
    const next = seededRandom(ORDER_SEED);
    for (let rep = 0; rep < scope.sizes.reps; rep++) {
      const lat = Object.fromEntries(names.map((v) => [v, []])) as unknown as Record<V, number[]>;
      // Interleaved, one request at a time, so every variant sees the same background noise; in
      // a new order each round, so that no variant always follows the same one (the request after
      // a client.index paid for the engine's own fsync and refresh work in a fixed order).
      for (let k = 0; k < m; k++) {
        for (const v of shuffled(names, next)) {
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
      ["updateNoSync", "plainUpdate", "updateWithJob, no direct sync", "same update txn without job"],
      ["deleteNoSync", "plainDelete", "deleteWithJob (soft), no direct sync", "same soft-delete txn without job"],
      // The writer runs its one statement alone (no BEGIN/COMMIT): against the same statement run alone, the job's own cost.
      ["jobNoSync", "plainAlone", "createWithJob, no direct sync", "same insert alone, no txn, no job"],
      ["updateNoSync", "plainUpdateAlone", "updateWithJob, no direct sync", "same update alone, no txn, no job"],
      ["deleteNoSync", "plainDeleteAlone", "deleteWithJob (soft), no direct sync", "same soft delete alone, no txn, no job"],
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
            ...(p === "p50" && a === "jobNoSync" && b === "plainTx" ? { note: `${m} sequential requests per variant per repetition, variants interleaved; percentiles per repetition, then median [min–max] across repetitions` } : {}),
            ...(p === "p50" && a === "jobSync" ? { note: `direct sync = one _bulk with external version, timeout 500 ms; ${syncFailures} of ${m * scope.sizes.reps} direct syncs did not report ok` } : {}),
          }),
        );
      }
    }
    return { rows, info: { samplesPerRep: m, syncFailures } };
  },
};
