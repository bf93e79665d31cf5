import { sql } from "kysely";
import { createWriter, Drainer, enqueueReindex, type Collection } from "@tether/core";
import { annotations } from "@tether/annotations";
import { currentAnnotations } from "../current-annotations.js";
import type { Benchmark } from "../benchmark.js";
import { plainAnnotations } from "../plain-annotations.js";
import { compare, type ResultRow } from "../report.js";
import { percentiles } from "../stats.js";

const WARMUP = 20;

/**
 * What embedding the author costs the annotation collection: the same table drained and written
 * through the collection as the reference service declares it (a `load` joining annotation_user,
 * the author embed: every drain reads the rows with their author and checks for pending author
 * changes, and a write re-reads its row through `load` in a transaction of its own) against the
 * plain collection the other benchmarks run on (one row per document: lean reads, a write's row
 * and job in one statement). Every seeded author has an annotation_user row.
 */
export const authorEmbed: Benchmark = {
  name: "authors",
  title: "The annotation collection with its author embedded (load + fan-out embed) vs the plain collection (one row per document)",
  sinks: ["elasticsearch", "opensearch"],
  async run(scope) {
    const n = scope.sizes.verifyDocs;
    const { d, sink } = await currentAnnotations(scope, n);
    // The seeded annotations have 1000 authors (acct:user<0-999>@example.com): each gets a row.
    await sql`INSERT INTO annotation_user (userid, display_name) SELECT 'acct:user' || g || '@example.com', 'User ' || g FROM generate_series(0, 999) g`.execute(d.db);
    await sql`ANALYZE annotation_user`.execute(d.db);

    const drain = async (collection: Collection<any>, force: boolean): Promise<number> => {
      await enqueueReindex(d.db, collection, { scope: "all", ...(force ? { force } : {}) });
      await sql`ANALYZE tether.job`.execute(d.db);
      const t = performance.now();
      const r = await new Drainer({ db: d.db, sink, collections: [collection], concurrency: 2 }).drainUntilEmpty();
      const ms = performance.now() - t;
      const left = Number((await sql<{ n: string }>`SELECT count(*) AS n FROM tether.job`.execute(d.db)).rows[0]!.n);
      if (r.error || r.parked > 0 || left > 0) throw new Error(`drain of ${collection.name} (force ${force}) left ${left} job(s), parked ${r.parked}: ${r.error ?? JSON.stringify(r)}`);
      await sql`VACUUM ANALYZE tether.job`.execute(d.db);
      return n / (ms / 1000);
    };
    const drains = { verify: { authors: [] as number[], plain: [] as number[] }, forced: { authors: [] as number[], plain: [] as number[] } };
    for (let rep = 0; rep < scope.sizes.reps; rep++) {
      // Alternating which goes first, so that neither always finds the other's cache or dead tuples.
      const order: ["authors" | "plain", Collection<any>][] = [["authors", annotations], ["plain", plainAnnotations]];
      if (rep % 2 === 1) order.reverse();
      for (const kind of ["verify", "forced"] as const) {
        for (const [name, collection] of order) drains[kind][name].push(await drain(collection, kind === "forced"));
      }
      scope.log(`rep ${rep + 1}: verify ${drains.verify.authors.at(-1)!.toFixed(0)} vs ${drains.verify.plain.at(-1)!.toFixed(0)} jobs/s, forced ${drains.forced.authors.at(-1)!.toFixed(0)} vs ${drains.forced.plain.at(-1)!.toFixed(0)} jobs/s`);
    }

    // The write path: one annotation per request, interleaved, as the write benchmark does.
    const m = scope.sizes.writeSamples;
    const noSync = createWriter({});
    const withSync = createWriter({ sink });
    let i = 0;
    const values = () => ({ userid: `acct:user${i % 1000}@example.com`, target_uri: `https://example.com/a/${i}`, text: `written by the authors benchmark, request ${i++}` });
    const variants = {
      authorsNoSync: () => noSync.createWithJob(d.db, annotations, values()),
      plainNoSync: () => noSync.createWithJob(d.db, plainAnnotations, values()),
      authorsSync: () => withSync.createWithJob(d.db, annotations, values()),
      plainSync: () => withSync.createWithJob(d.db, plainAnnotations, values()),
    };
    type V = keyof typeof variants;
    const names = Object.keys(variants) as V[];
    const perRep = Object.fromEntries(names.map((v) => [v, []])) as unknown as Record<V, { p50: number; p99: number }[]>;
    for (let w = 0; w < WARMUP; w++) for (const v of names) await variants[v]();
    for (let rep = 0; rep < scope.sizes.reps; rep++) {
      const lat = Object.fromEntries(names.map((v) => [v, []])) as unknown as Record<V, number[]>;
      for (let k = 0; k < m; k++) {
        for (const v of k % 2 === 0 ? names : [...names].reverse()) {
          const t = performance.now();
          await variants[v]();
          lat[v].push(performance.now() - t);
        }
      }
      for (const v of names) perRep[v].push(percentiles(lat[v]));
      scope.log(`rep ${rep + 1}: p50 ms ${names.map((v) => `${v} ${perRep[v].at(-1)!.p50.toFixed(2)}`).join(", ")}`);
    }

    const rows: ResultRow[] = [
      compare({
        bench: "authors",
        metric: `verify-only drain (all current), N=${n}`,
        unit: "jobs/s",
        better: "higher",
        tether: drains.verify.authors,
        baselineName: "plain collection",
        baseline: drains.verify.plain,
        note: "Drainer.drainUntilEmpty of an enqueueReindex(all), every document current: with the author embed the rows are read whole through load (the join) and checked for pending author changes; the plain collection confirms from the id, version and deleted columns alone",
      }),
      compare({
        bench: "authors",
        metric: `forced re-index drain (every document written), N=${n}`,
        unit: "jobs/s",
        better: "higher",
        tether: drains.forced.authors,
        baselineName: "plain collection",
        baseline: drains.forced.plain,
        note: "enqueueReindex(all, force): every document built and written; with the author embed from the joined row",
      }),
    ];
    const pairs: [V, V, string][] = [
      ["authorsNoSync", "plainNoSync", "createWithJob, no direct sync"],
      ["authorsSync", "plainSync", "createWithJob + direct sync"],
    ];
    for (const [a, b, metric] of pairs) {
      for (const p of ["p50", "p99"] as const) {
        rows.push(
          compare({
            bench: "authors",
            metric: `${metric} ${p}`,
            unit: "ms",
            better: "lower",
            tether: perRep[a].map((x) => x[p]),
            baselineName: "plain collection",
            baseline: perRep[b].map((x) => x[p]),
            note: "with the author embed: BEGIN, insert, the row re-read through load, the job, COMMIT; plain: the row and its job in one statement",
          }),
        );
      }
    }
    return { rows, info: { docs: n, authors: 1000, writeSamples: m } };
  },
};
