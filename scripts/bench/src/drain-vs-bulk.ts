import { sql } from "kysely";
import { plainAnnotations } from "./plain-annotations.js";
import { resetIndex } from "./annotation-data.js";
import { countDocs, deleteIndex, rawBulk, type BenchSink } from "./bench-engine.js";
import type { BenchDatabase, BenchScope } from "./bench-scope.js";
import { runDrainChild, type DrainChildResult } from "./drain-child-process.js";
import { formatStageBreakdown } from "./stage-breakdown.js";

export const RAW_INDEX = "raw_annotations";

export interface DrainVsBulk {
  drain: DrainChildResult;
  /** docs/s of the drainer (jobs confirmed per second of drainUntilEmpty). */
  drainRate: number;
  /** docs/s of helpers.bulk for the same documents into RAW_INDEX. */
  bulkRate: number;
}

/**
 * One repetition: the real drainer (child process, the real sink of `--sink`) over jobs already
 * in tether.job, and the same client's helpers.bulk of the same documents. Only the index under test exists while
 * it runs; `rawFirst` alternates the order between repetitions.
 */
export async function drainVsBulk(scope: BenchScope, d: BenchDatabase, sink: BenchSink, expected: number, rawFirst: boolean): Promise<DrainVsBulk> {
  let drain: DrainChildResult | undefined;
  let bulkMs = 0;
  const runDrain = async () => {
    await deleteIndex(sink, RAW_INDEX);
    await sql`ANALYZE tether.job`.execute(d.db);
    drain = await runDrainChild({ databaseUrl: d.url, sinkKind: scope.env.sinkKind, elasticsearchUrl: scope.env.esUrl, indexPrefix: scope.indexPrefix, mode: "drain" });
    const c = drain.counts;
    if (!c || c.error || c.repaired !== expected || c.claimed !== expected) throw new Error(`drain did not repair ${expected} documents: ${JSON.stringify(c)}`);
    const docs = await countDocs(sink, plainAnnotations.index);
    if (docs !== expected) throw new Error(`after the drain the index holds ${docs} documents, expected ${expected}`);
  };
  const runBulk = async () => {
    await deleteIndex(sink, plainAnnotations.index);
    await resetIndex(sink, RAW_INDEX);
    const t = performance.now();
    const r = await rawBulk(sink, RAW_INDEX, d.db);
    bulkMs = performance.now() - t;
    if (r.docs !== expected || r.failed > 0) throw new Error(`helpers.bulk wrote ${r.docs}/${expected} (${r.failed} failed)`);
  };
  if (rawFirst) {
    await runBulk();
    await resetIndex(sink, plainAnnotations.index);
    await runDrain();
  } else {
    await resetIndex(sink, plainAnnotations.index);
    await runDrain();
    await runBulk();
  }
  return { drain: drain!, drainRate: expected / (drain!.durationMs / 1000), bulkRate: expected / (bulkMs / 1000) };
}

/** "where the drain's time went" across repetitions, for the notes. */
export function timeSplit(drains: readonly DrainChildResult[]): string {
  const sum = (f: (d: DrainChildResult) => number) => drains.reduce((a, d) => a + f(d), 0);
  const mget = sum((d) => d.sinkMs.fetchStates);
  const bulk = sum((d) => d.sinkMs.write);
  const wall = sum((d) => d.durationMs);
  // Passes overlap, so call times add up past the wall time: report each call's share of the
  // sink time, and how busy sink calls kept the drainer.
  const pct = (x: number, of: number) => `${Math.round((100 * x) / of)}%`;
  return `sink call time over all repetitions: _mget (verify + read-back) ${pct(mget, mget + bulk)}, _bulk ${pct(bulk, mget + bulk)}; summed call time = ${pct(mget + bulk, wall)} of wall time (over 100% = calls overlapped); ${formatStageBreakdown(drains)}`;
}

/** The memory baseline: the same child process, loaded and connected, not draining. */
export async function idleDrainer(scope: BenchScope, d: BenchDatabase): Promise<DrainChildResult> {
  return runDrainChild({ databaseUrl: d.url, sinkKind: scope.env.sinkKind, elasticsearchUrl: scope.env.esUrl, indexPrefix: scope.indexPrefix, mode: "idle" });
}
