import type { Kysely } from "kysely";
import type { Collection } from "../collection.js";
import { ValidationError } from "../errors.js";
import { resolveOptions, type OptionDefaults } from "../resolve-options.js";
import { idColumnType, occupiedBuckets, rowStates, summarizeRows } from "../store/collection-store.js";
import { classifyDrift, type DriftKind } from "./verification-matrix.js";
import { insertJobs } from "../store/job-store.js";
import { ALL_IDS, type BucketRange, type BucketSummary, type Sink, type SinkCallOptions } from "../sink.js";

/**
 * Terminology
 * - anti-entropy: comparing a whole collection on both sides, independently of any job, to
 *   find drift nothing described (a document deleted or edited behind tether's back, a row
 *   written by a migration that bypassed the write path).
 * - bucket: an id range [from, to); each side summarizes its live entities in it as
 *   (count, sum of entityHash(id, version), sum of versions). Bounds are bigints, exact over
 *   the whole bigint key space (ids reach 2^63 - 1, far past a double's 2^53).
 * - leaf: a differing bucket narrow enough, or holding few enough entities on both sides, to
 *   compare id by id.
 */

export interface VerifyOptions {
  /** Ids per top-level bucket. Default 10000. */
  bucketSize?: number;
  /** A differing bucket of at most this many ids is compared id by id. Default 2000. */
  leafSize?: number;
  /** Sub-buckets a larger differing bucket splits into. Default 16. */
  fanout?: number;
  /** Top-level buckets summarized per round trip (bounds memory and paces progress). Default 20. */
  window?: number;
  /** Enqueue a repair job for every drifted entity. Default true. */
  enqueue?: boolean;
  /** Priority of repair jobs. Default 500 (after live traffic, before bulk re-index). */
  priority?: number;
  /** Tag of repair jobs. Default "verify". */
  tag?: string;
  /** Drifted ids kept per kind as examples in the report. Default 10. */
  sampleSize?: number;
  /** Timeouts and retries of each downstream call. */
  sinkOptions?: SinkCallOptions;
  /** Called after each top-level window, for a progress bar. */
  onProgress?: (p: VerifyProgress) => void;
  /**
   * The downstream index to compare with the rows (default: the collection's own). A rebuild
   * compares the index it is building before swapping it in.
   */
  index?: string;
  /**
   * Repairs drift itself instead of enqueuing jobs (`enqueue` is then ignored): called with the
   * ids of each leaf that are still drifted after the realtime re-read. A rebuild writes them
   * straight into the index it is building, which no job would reach.
   */
  onDrift?: (ids: string[]) => Promise<void>;
  /** Stops between round trips; the report so far is not returned (the promise rejects). */
  signal?: AbortSignal;
}

export interface VerifyProgress {
  collection: string;
  /** Top-level buckets (plus the two open-ended ones around the id range). */
  total: number;
  done: number;
  bucketsDiffering: number;
  drifted: number;
}

export interface VerifyReport {
  collection: string;
  /**
   * The id range of Postgres the top-level buckets cover ([from, to), exact decimal strings:
   * ids run past a double's 2^53), or null when the table is empty.
   */
  idRange: { from: string; to: string } | null;
  /** Buckets summarized on both sides, at every level. */
  bucketsCompared: number;
  /** Of those, the ones whose summaries differed. */
  bucketsDiffering: number;
  /** Leaves compared id by id. */
  leavesCompared: number;
  drifted: Record<DriftKind, number>;
  driftedTotal: number;
  /** Up to `sampleSize` ids per kind. */
  samples: Record<DriftKind, string[]>;
  /** Repair jobs enqueued (0 when `enqueue` is false). */
  enqueued: number;
  /**
   * Documents in the index without tether's metadata (written by something else): the buckets
   * cannot see them. `tether verify --deep` lists and removes them.
   */
  orphans: number;
  durationMs: number;
}


/** The defaults documented on `VerifyOptions`, and how each value is validated. */
export const VERIFY_DEFAULTS: OptionDefaults<Omit<VerifyOptions, "sinkOptions" | "onProgress" | "signal" | "index" | "onDrift">> = {
  bucketSize: [10_000, "positive integer"],
  leafSize: [2_000, "positive integer"],
  fanout: [16, "positive integer"],
  window: [20, "positive integer"],
  enqueue: [true, "boolean"],
  priority: [500, "non-negative integer"],
  tag: ["verify", "non-empty string"],
  sampleSize: [10, "non-negative integer"],
};

/**
 * Whether the bucketed verify can compare this collection (integer ids: smallint, integer,
 * bigint). Others — uuid, text — are verified by `deepVerifyCollection`.
 *
 * @example
 * const report = (await hasIntegerIds(db, products)) ? await verifyCollection(db, sink, products) : await deepVerifyCollection(db, sink, products);
 */
export async function hasIntegerIds(db: Kysely<any>, collection: Collection<any>): Promise<boolean> {
  const type = await idColumnType(db, collection);
  return type === undefined || ["smallint", "integer", "bigint"].includes(type);
}

const min = (a: bigint, b: bigint) => (a < b ? a : b);
const max = (a: bigint, b: bigint) => (a > b ? a : b);

/** Contiguous ranges of `step` ids covering [from, to). */
function slice(from: bigint, to: bigint, step: bigint): BucketRange[] {
  const out: BucketRange[] = [];
  for (let lo = from; lo < to; lo = min(to, lo + step)) out.push({ from: lo, to: min(to, lo + step) });
  return out;
}

/**
 * Full anti-entropy of one collection with integer ids. Postgres and the sink are compared in
 * id-range buckets (count, hash sum and version sum of live entities, one aggregate query per
 * side per round trip); only buckets that differ are split, recursively, down to leaves of at
 * most `leafSize` ids, which are compared id by id and re-checked with a realtime read before a
 * repair job is enqueued. Memory stays bounded by the window and the leaf size, never by the
 * collection.
 *
 * @example
 * const report = await verifyCollection(db, sink, annotations, { onProgress: (p) => bar.update(p.done) });
 * // { bucketsCompared: 104, bucketsDiffering: 3, drifted: { missing: 2, stale: 1, ghost: 0, deleted_live: 0 }, enqueued: 3, ... }
 */
export async function verifyCollection(db: Kysely<any>, sink: Sink, collection: Collection<any>, opts: VerifyOptions = {}): Promise<VerifyReport> {
  const started = performance.now();
  const { bucketSize, leafSize, fanout, window, enqueue, priority, tag, sampleSize } = resolveOptions(VERIFY_DEFAULTS, opts);
  if (fanout < 2) throw new ValidationError("fanout", "must be at least 2");
  const sinkOpts: SinkCallOptions = { ...opts.sinkOptions, ...(opts.signal ? { signal: opts.signal } : {}) };
  const index = opts.index ?? collection.index;

  const report: VerifyReport = {
    collection: collection.name,
    idRange: null,
    bucketsCompared: 0,
    bucketsDiffering: 0,
    leavesCompared: 0,
    drifted: { missing: 0, stale: 0, ghost: 0, deleted_live: 0 },
    driftedTotal: 0,
    samples: { missing: [], stale: [], ghost: [], deleted_live: [] },
    enqueued: 0,
    orphans: 0,
    durationMs: 0,
  };

  async function compareLeaf(range: BucketRange): Promise<void> {
    report.leavesCompared += 1;
    const [rows, states] = await Promise.all([
      rowStates(db, collection, { range }),
      sink.listStates(index, range, sinkOpts),
    ]);
    const candidates: string[] = [];
    for (const eid of new Set([...rows.keys(), ...states.keys()])) if (classifyDrift(rows.get(eid), states.get(eid))) candidates.push(eid);
    if (candidates.length === 0) return;
    // Search is near-realtime and live writes go on: re-read both sides (mget is realtime)
    // so only drift that is still there is counted and repaired.
    const [rows2, states2] = await Promise.all([rowStates(db, collection, { ids: candidates }), sink.fetchStates(index, candidates, sinkOpts)]);
    const drifted: string[] = [];
    for (const eid of candidates) {
      const kind = classifyDrift(rows2.get(eid), states2.get(eid));
      if (!kind) continue;
      drifted.push(eid);
      report.drifted[kind] += 1;
      report.driftedTotal += 1;
      if (report.samples[kind].length < sampleSize) report.samples[kind].push(eid);
    }
    if (drifted.length > 0 && opts.onDrift) await opts.onDrift(drifted);
    else if (drifted.length > 0 && enqueue) {
      const ids = await insertJobs(db, drifted.map((entityId) => ({ name: collection.jobName, entityId, priority, tag, delayMs: 0 })));
      report.enqueued += ids.length;
    }
  }

  const differs = (a: BucketSummary, b: BucketSummary) =>
    a.count !== b.count || a.hashSum !== b.hashSum || (b.versionSum !== undefined && a.versionSum !== b.versionSum);

  /** Summarizes contiguous ranges on both sides and descends into those that differ. */
  async function drill(ranges: readonly BucketRange[]): Promise<void> {
    opts.signal?.throwIfAborted();
    const [mine, theirs] = await Promise.all([summarizeRows(db, collection, ranges), sink.summarize(index, ranges, sinkOpts)]);
    report.bucketsCompared += ranges.length;
    for (let i = 0; i < ranges.length; i++) {
      if (!differs(mine[i]!, theirs[i]!)) continue;
      report.bucketsDiffering += 1;
      const r = ranges[i]!;
      const width = r.to - r.from;
      // A leaf by what it holds, not by its width: a wide bucket with few entities (the
      // open-ended ones, a gap between far-apart ids) is compared id by id at once.
      if (width <= BigInt(leafSize) || Math.max(mine[i]!.count, theirs[i]!.count) <= leafSize) await compareLeaf(r);
      else await drill(slice(r.from, r.to, (width + BigInt(fanout) - 1n) / BigInt(fanout)));
    }
  }

  if (!(await hasIntegerIds(db, collection))) {
    throw new ValidationError("idColumn", `${collection.name}: the bucketed verify needs integer ids (${collection.table}.${collection.idColumn} is not); use deepVerifyCollection (tether verify --deep)`);
  }
  await sink.refreshIndex?.(index);

  // Top level: the aligned buckets that hold rows, one bucket for each gap between them (ids
  // far apart cost one bucket per gap, not one per bucketSize ids), and an open-ended bucket on
  // each side for documents whose ids Postgres does not have at all.
  const occupied = await occupiedBuckets(db, collection, bucketSize);
  let groups: BucketRange[][];
  if (occupied.length === 0) {
    groups = [[{ ...ALL_IDS }]];
  } else {
    const size = BigInt(bucketSize);
    const top: BucketRange[] = [];
    for (const b of occupied) {
      // The buckets at either end of bigint stop at its bounds, not past them.
      const from = max(b * size, ALL_IDS.from);
      const last = top[top.length - 1];
      if (last && last.to < from) top.push({ from: last.to, to: from });
      top.push({ from, to: min(from + size, ALL_IDS.to) });
    }
    const from = top[0]!.from;
    const to = top[top.length - 1]!.to;
    report.idRange = { from: String(from), to: String(to) };
    groups = [];
    if (ALL_IDS.from < from) groups.push([{ from: ALL_IDS.from, to: from }]);
    for (let i = 0; i < top.length; i += window) groups.push(top.slice(i, i + window));
    if (to < ALL_IDS.to) groups.push([{ from: to, to: ALL_IDS.to }]);
  }
  const total = groups.reduce((n, g) => n + g.length, 0);
  let done = 0;
  opts.onProgress?.({ collection: collection.name, total, done, bucketsDiffering: 0, drifted: 0 });
  for (const group of groups) {
    await drill(group);
    done += group.length;
    opts.onProgress?.({ collection: collection.name, total, done, bucketsDiffering: report.bucketsDiffering, drifted: report.driftedTotal });
  }
  report.orphans = (await sink.countOrphans?.(index, sinkOpts)) ?? 0;
  report.durationMs = performance.now() - started;
  return report;
}
