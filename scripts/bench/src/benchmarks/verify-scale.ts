import type { Kysely } from "kysely";
import { migrate, verifyCollection, type VerifyReport } from "@tether/core";
import type { Benchmark } from "../benchmark.js";
import type { BenchSink } from "../bench-engine.js";
import type { BenchScope } from "../bench-scope.js";
import { compare, type ResultRow } from "../report.js";
import { SCALE_COLLECTIONS, scaleItemMigrations, type ScaleIdType } from "../verify-scale/scale-items.js";
import { indexScaleDocs, insertScaleRows, loadSettings } from "../verify-scale/scale-load.js";
import { countingSink, describeCalls } from "../verify-scale/counting-sink.js";
import { shiftVersions, spreadItems } from "../verify-scale/scale-drift.js";
import { runDeepVerifyChild, type DeepVerifyChildResult } from "../verify-scale/deep-verify-child-process.js";
import { drainUnderVerify } from "../verify-scale/drain-under-verify.js";

const ID_TYPES: readonly ScaleIdType[] = ["int", "uuid"];
/** Drifted documents spread over the large collection. */
const DRIFTED = 100;
/** The leaf size tried beside the default for the drift figure. */
const SMALL_LEAF = 64;

const seconds = (ms: number) => (ms / 1000).toFixed(1);

/** Fast verify of a collection that is consistent: its seconds (throws on any drift). */
async function fastVerify(scope: BenchScope, db: Kysely<any>, sink: BenchSink, idType: ScaleIdType, n: number): Promise<{ s: number; engine: string }> {
  const counting = countingSink(sink);
  const r = await verifyCollection(db, counting.sink, SCALE_COLLECTIONS[idType], { enqueue: false });
  if (r.driftedTotal !== 0 || r.documentsCompared !== n) throw new Error(`fast verify of ${n} ${idType} items: drift ${r.driftedTotal}, compared ${r.documentsCompared}`);
  const engine = describeCalls(counting.calls);
  scope.log(`fast verify, ${idType} ids, N=${n}: ${seconds(r.durationMs)} s (${r.bucketsCompared} buckets; engine calls: ${engine})`);
  return { s: r.durationMs / 1000, engine };
}

/** Fast verify with DRIFTED stale documents spread over the collection: documents listed id by id. */
async function findDrift(scope: BenchScope, db: Kysely<any>, sink: BenchSink, idType: ScaleIdType, n: number, leafSize?: number): Promise<{ listed: number; report: VerifyReport; engine: string }> {
  const gs = spreadItems(n, DRIFTED);
  await shiftVersions(db, idType, gs, 1);
  try {
    const counting = countingSink(sink);
    const report = await verifyCollection(db, counting.sink, SCALE_COLLECTIONS[idType], { enqueue: false, ...(leafSize ? { leafSize } : {}) });
    if (report.drifted.stale !== DRIFTED || report.driftedTotal !== DRIFTED) throw new Error(`found ${JSON.stringify(report.drifted)} of ${DRIFTED} stale documents`);
    const engine = describeCalls(counting.calls);
    scope.log(`drift, ${idType} ids, N=${n}, leafSize ${leafSize ?? "default"}: ${counting.listed()} documents compared id by id in ${report.leavesCompared} leaves, ${report.bucketsCompared} buckets, ${seconds(report.durationMs)} s (engine calls: ${engine})`);
    return { listed: counting.listed(), report, engine };
  } finally {
    await shiftVersions(db, idType, gs, -1);
  }
}

export const verifyScale: Benchmark = {
  name: "verify-scale",
  title: "verify at N and 10N (--full: 1M and 10M), integer and uuid ids: fast verify growth, drift found per document compared, deep verify rate and memory, the drain beside a scheduled verify",
  sinks: ["elasticsearch", "opensearch"],
  async run(scope) {
    const small = scope.sizes.verifyScaleDocs;
    const large = 10 * small;
    const reps = scope.sizes.reps;
    // A fast verify at 10M takes minutes: at most two of each (paired N / 10N).
    const fastReps = Math.min(reps, 2);
    const drainJobs = Math.min(scope.sizes.verifyScaleDrainJobs, Math.floor(large / (2 * reps)));
    const d = await scope.rawDatabase("", 10);
    await migrate(d.db, [scaleItemMigrations]);
    const sink = scope.engineSink();
    const engineUrl = scope.env.esUrl;
    for (const t of ID_TYPES) await sink.ensureIndex(SCALE_COLLECTIONS[t].index, SCALE_COLLECTIONS[t].mappings);
    const loadMs: Record<string, number> = {};

    /** Items (from, to] of both id types into Postgres and the engine (refresh off while loading). */
    const load = async (from: number, to: number) => {
      for (const t of ID_TYPES) {
        const index = sink.indexName(SCALE_COLLECTIONS[t].index);
        const started = performance.now();
        await loadSettings(engineUrl, index, true);
        await Promise.all([insertScaleRows(d.db, t, from, to), indexScaleDocs(engineUrl, sink, t, from, to)]);
        await loadSettings(engineUrl, index, false);
        loadMs[`${t} ${from}-${to}`] = performance.now() - started;
        scope.log(`loaded ${t} items ${from + 1}..${to} in ${seconds(performance.now() - started)} s`);
      }
    };

    // At N, then the same collections grown to 10N.
    await load(0, small);
    const fast: Record<ScaleIdType, { small: number[]; large: number[]; engine: string[] }> = { int: { small: [], large: [], engine: [] }, uuid: { small: [], large: [], engine: [] } };
    for (let rep = 0; rep < fastReps; rep++) for (const t of ID_TYPES) fast[t].small.push((await fastVerify(scope, d.db, sink, t, small)).s);
    const deep: Record<ScaleIdType, { small?: DeepVerifyChildResult; large?: DeepVerifyChildResult }> = { int: {}, uuid: {} };
    const deepChild = async (t: ScaleIdType, n: number) => {
      const r = await runDeepVerifyChild({ databaseUrl: d.url, sinkKind: scope.env.sinkKind, engineUrl, indexPrefix: scope.indexPrefix, idType: t });
      if (r.scanned !== n || r.driftedTotal !== 0) throw new Error(`deep verify of ${n} ${t} items read ${r.scanned}, drift ${r.driftedTotal}`);
      scope.log(`deep verify, ${t} ids, N=${n}: ${r.docsPerSecond.toFixed(0)} docs/s, peak RSS ${(r.maxRssKb / 1024).toFixed(0)} MB (peak heap used ${r.peakMb.heapUsed} MB, external ${r.peakMb.external} MB)`);
      return r;
    };
    for (const t of ID_TYPES) deep[t].small = await deepChild(t, small);

    await load(small, large);
    for (let rep = 0; rep < fastReps; rep++) {
      for (const t of ID_TYPES) {
        const r = await fastVerify(scope, d.db, sink, t, large);
        fast[t].large.push(r.s);
        fast[t].engine.push(r.engine);
      }
    }
    type Found = Awaited<ReturnType<typeof findDrift>>;
    const drift: Record<ScaleIdType, { byDefault: Found; smallLeaf: Found }> = {} as never;
    for (const t of ID_TYPES) drift[t] = { byDefault: await findDrift(scope, d.db, sink, t, large), smallLeaf: await findDrift(scope, d.db, sink, t, large, SMALL_LEAF) };
    // Deep at 10N: integer ids here, uuid ids (the slowest piece) after the drain figure.
    deep.int.large = await deepChild("int", large);

    // The drain with and without a scheduled verify of the same (large, integer-id) collection, alternating.
    const without: number[] = [];
    const withVerify: number[] = [];
    const verified: number[] = [];
    for (let rep = 0; rep < reps; rep++) {
      const order = rep % 2 === 0 ? [false, true] : [true, false];
      for (const [i, verifying] of order.entries()) {
        const r = await drainUnderVerify(d.db, sink, SCALE_COLLECTIONS.int, (2 * rep + i) * drainJobs, drainJobs, verifying);
        (verifying ? withVerify : without).push(r.jobsPerSecond);
        if (verifying) verified.push(r.verified);
        scope.log(`drain of ${drainJobs} jobs ${verifying ? `beside a scheduled verify (${r.verified} entities compared meanwhile)` : "alone"}: ${r.jobsPerSecond.toFixed(0)} jobs/s`);
      }
    }

    deep.uuid.large = await deepChild("uuid", large);

    const rows: ResultRow[] = [];
    for (const t of ID_TYPES) {
      rows.push(
        compare({
          bench: "verify-scale",
          metric: `fast verify time, ${t} ids, N=${large} vs N=${small}`,
          unit: "s",
          better: "lower",
          tether: fast[t].large,
          baselineName: `same verify, N=${small}`,
          baseline: fast[t].small,
          goal: { op: "<=", value: 10 },
          note: `verifyCollection of a consistent collection (default buckets), the tether column is the absolute time at N=${large}; goal ≤ 10× for 10× the documents (no worse than linear). Time in engine calls at N=${large} (they overlap Postgres's): ${fast[t].engine.join("; ")}`,
        }),
      );
    }
    for (const t of ID_TYPES) {
      const { byDefault, smallLeaf } = drift[t];
      rows.push(
        compare({
          bench: "verify-scale",
          metric: `documents compared id by id per drifted document, ${t} ids, N=${large}`,
          unit: "docs",
          better: "lower",
          tether: [byDefault.listed],
          baselineName: `the ${DRIFTED} drifted documents`,
          baseline: [DRIFTED],
          goal: { op: "<=", value: 50 },
          note: `${DRIFTED} stale documents (versions bumped in Postgres without a job) spread evenly; the tether column counts what the sink's listStates returned (leaf comparisons), default leafSize; ${byDefault.report.leavesCompared} leaves, ${byDefault.report.bucketsCompared} buckets, ${seconds(byDefault.report.durationMs)} s (engine calls: ${byDefault.engine}). With leafSize ${SMALL_LEAF}: ${smallLeaf.listed} documents (${(smallLeaf.listed / DRIFTED).toFixed(1)}×), ${smallLeaf.report.leavesCompared} leaves, ${smallLeaf.report.bucketsCompared} buckets, ${seconds(smallLeaf.report.durationMs)} s`,
        }),
      );
    }
    for (const t of ID_TYPES) {
      const { small: s, large: l } = deep[t] as Required<(typeof deep)[ScaleIdType]>;
      rows.push(
        compare({
          bench: "verify-scale",
          metric: `deep verify rate, ${t} ids, N=${large} vs N=${small}`,
          unit: "docs/s",
          better: "higher",
          tether: [l.docsPerSecond],
          baselineName: `same, N=${small}`,
          baseline: [s.docsPerSecond],
          goal: { op: ">=", value: 0.9 },
          note: `deepVerifyCollection (no enqueue) in a child process; ${seconds(l.durationMs)} s at N=${large}, ${seconds(s.durationMs)} s at N=${small}`,
        }),
        compare({
          bench: "verify-scale",
          metric: `deep verify peak RSS, ${t} ids, N=${large} vs N=${small}`,
          unit: "MB",
          better: "lower",
          tether: [l.maxRssKb / 1024],
          baselineName: `same, N=${small}`,
          baseline: [s.maxRssKb / 1024],
          goal: { op: "<=", value: 1.2 },
          note: `process.resourceUsage().maxRSS of the deep verify's child process at exit; peaks sampled every 200 ms: heap used ${l.peakMb.heapUsed} MB at N=${large}, ${s.peakMb.heapUsed} MB at N=${small}; external ${l.peakMb.external} / ${s.peakMb.external} MB`,
        }),
      );
    }
    rows.push(
      compare({
        bench: "verify-scale",
        metric: `drain throughput beside a scheduled verify, ${drainJobs} jobs, N=${large} int ids`,
        unit: "jobs/s",
        better: "higher",
        tether: withVerify,
        baselineName: "same drain, no verify",
        baseline: without,
        goal: { op: ">=", value: 0.9 },
        note: `Drainer.drainUntilEmpty (concurrency 2) of re-index jobs whose rows were bumped (every job writes), alternating with/without a VerifyScheduler fast run (default pace) of the same collection; the verify compared ${verified.join(", ")} entities during the drains`,
      }),
    );
    return { rows, info: { small, large, drainJobs, loadMs, fast, deep, drift: Object.fromEntries(ID_TYPES.map((t) => [t, { byDefault: drift[t].byDefault.listed, smallLeaf: drift[t].smallLeaf.listed }])), verified } };
  },
};
