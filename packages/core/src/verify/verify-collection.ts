import type { Kysely } from "kysely";
import type { Collection } from "../collection.js";
import { TetherError, ValidationError } from "../errors.js";
import { resolveOptions, type OptionDefaults } from "../resolve-options.js";
import { canonicalEntityId, idTypeClass } from "../entity-id.js";
import { countRows, idColumnType, occupiedBuckets, rowStates, summarizeRows, type BucketKeying } from "../store/collection-store.js";
import { HASHED_KEYS_END } from "./entity-key.js";
import { classifyDrift, type DriftKind } from "./verification-matrix.js";
import { insertJobs } from "../store/job-store.js";
import { idsWithQueuedJobs } from "../store/queued-job-store.js";
import { embedDrift } from "./embed-drift.js";
import { settledDrift } from "./settled-drift.js";
import { ALL_IDS, type BucketRange, type BucketSummary, type Sink, type SinkCallOptions } from "../sink.js";

/**
 * Terminology
 * - anti-entropy: comparing a whole collection on both sides, independently of any job, to
 *   find drift nothing described (a document deleted or edited behind tether's back, a row
 *   written by a migration that bypassed the write path).
 * - key: where an entity lies for the buckets (`entityKey`, ./entity-key.ts): an integer id
 *   itself, any other id (uuid, text) a 60-bit hash of it, so every id type is compared alike.
 * - bucket: a key range [from, to); each side summarizes its live entities in it as
 *   (count, sum of entityHash(id, version), sum of versions). Bounds are bigints, exact over
 *   the whole bigint key space (ids reach 2^63 - 1, far past a double's 2^53).
 * - window: `window` contiguous top-level buckets, summarized in one round trip per side; after
 *   each, the run may checkpoint (`onWindow`: where the next window starts) and be resumed from
 *   there (`from`).
 * - leaf: a differing bucket narrow enough, or holding few enough entities on both sides, to
 *   compare id by id.
 */

export interface VerifyOptions {
  /** Ids per top-level bucket. Default 10000. */
  bucketSize?: number;
  /**
   * A differing bucket of at most this many ids is compared id by id. Default 64. Where drift is
   * dense (more than half of a split's buckets differ), a differing bucket of up to 2000 ids (or
   * `leafSize`, if larger) is compared id by id at once instead of being split further.
   */
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
  /**
   * An entity with a job of the collection still queued is not drift (a job describes it: a
   * write in its grace period, a repair on its way). Default false; the scheduler sets it, so
   * live traffic never raises the drift alert.
   */
  skipQueued?: boolean;
  /**
   * Resumes a run: top-level buckets below this key (a decimal string, as `VerifyWindow.next`
   * gave it) are skipped; the report counts only what this call compares. Default: from the start.
   */
  from?: string;
  /**
   * Awaited after each window of top-level buckets (and its drill-downs and repairs): where the
   * next window starts, for a checkpoint, and a place to pace the run (the scheduler throttles
   * here). A rejection stops the run.
   */
  onWindow?: (w: VerifyWindow) => Promise<void>;
}

/** One window done (see `VerifyOptions.onWindow`). */
export interface VerifyWindow {
  /** The key where the next window starts (decimal string), or null after the last one. */
  next: string | null;
  /** Entities this window's top-level buckets hold (the larger count of the two sides). */
  documents: number;
  /** The report so far (this call's figures). */
  report: VerifyReport;
}

/**
 * The documents of a uuid- or text-keyed collection's index lack the bucket key (they were
 * written before ids other than integers had one): the bucketed verify would see them as
 * missing. `tether rebuild` writes them again with it; `tether verify --deep` needs none.
 */
export class VerifyNeedsRebuildError extends TetherError {
  readonly collection: string;
  readonly unkeyed: number;
  constructor(collection: string, unkeyed: number) {
    super(
      "E_VERIFY_NEEDS_REBUILD",
      `${collection}: ${unkeyed} document(s) in its index predate the bucket key of uuid and text ids; run \`tether rebuild ${collection}\` once for the bucketed verify (\`tether verify --deep\` needs none)`,
    );
    this.collection = collection;
    this.unkeyed = unkeyed;
  }
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
  /** Entities the top-level buckets held (the larger count of the two sides, summed). */
  documentsCompared: number;
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


/** Where drift is dense, the size of bucket compared id by id without splitting it further. */
const DENSE_LEAF_SIZE = 2_000;

/** The defaults documented on `VerifyOptions`, and how each value is validated. */
export const VERIFY_DEFAULTS: OptionDefaults<Omit<VerifyOptions, "sinkOptions" | "onProgress" | "signal" | "index" | "onDrift" | "from" | "onWindow" | "skipQueued">> = {
  bucketSize: [10_000, "positive integer"],
  leafSize: [64, "positive integer"],
  fanout: [16, "positive integer"],
  window: [20, "positive integer"],
  enqueue: [true, "boolean"],
  priority: [500, "non-negative integer"],
  tag: ["verify", "non-empty string"],
  sampleSize: [10, "non-negative integer"],
};

/**
 * Whether the collection's ids are integers (smallint, integer, bigint): its buckets are id
 * ranges. Others (uuid, text) are bucketed by a hash of the id (`entityKey`); both are verified
 * by `verifyCollection`.
 *
 * @example
 * if (!(await hasIntegerIds(db, products))) console.log("bucketed by a hash of the id");
 */
export async function hasIntegerIds(db: Kysely<any>, collection: Collection<any>): Promise<boolean> {
  const type = await idColumnType(db, collection);
  return type === undefined || idTypeClass(type) === "integer";
}

async function bucketKeying(db: Kysely<any>, collection: Collection<any>): Promise<BucketKeying> {
  const idType = await idColumnType(db, collection);
  return { idType, hashed: idType !== undefined && idTypeClass(idType) !== "integer" };
}

const fitsBigint = (id: string) => /^-?[0-9]+$/.test(id) && BigInt(id) >= ALL_IDS.from && BigInt(id) < ALL_IDS.to;
const min = (a: bigint, b: bigint) => (a < b ? a : b);
const max = (a: bigint, b: bigint) => (a > b ? a : b);

/** Contiguous ranges of `step` ids covering [from, to). */
function slice(from: bigint, to: bigint, step: bigint): BucketRange[] {
  const out: BucketRange[] = [];
  for (let lo = from; lo < to; lo = min(to, lo + step)) out.push({ from: lo, to: min(to, lo + step) });
  return out;
}

/** Skips the top-level buckets below `from` (a resumed run); the one holding it starts there. */
function resumeAt(groups: BucketRange[][], from: bigint, window: number): BucketRange[][] {
  const left = groups.flat().flatMap((b) => (b.to <= from ? [] : [{ from: b.from < from ? from : b.from, to: b.to }]));
  const out: BucketRange[][] = [];
  for (let i = 0; i < left.length; i += window) out.push(left.slice(i, i + window));
  return out;
}

/**
 * Full anti-entropy of one collection, whatever its id type. Postgres and the sink are compared
 * in buckets of keys (an integer id is its own key, a uuid or text id a hash of it: `entityKey`),
 * as count, hash sum and version sum of live entities, one aggregate query per side per round
 * trip; only buckets that differ are split, recursively, down to leaves, which are compared id by
 * id and re-checked with a realtime read before a repair job is enqueued. Memory stays bounded
 * by the window and the leaf size, never by the collection. One downstream request is in flight
 * at a time.
 *
 * @example
 * const report = await verifyCollection(db, sink, annotations, { onProgress: (p) => bar.update(p.done) });
 * // { bucketsCompared: 104, bucketsDiffering: 3, drifted: { missing: 2, stale: 1, ghost: 0, deleted_live: 0, embedded: 0 }, enqueued: 3, ... }
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
    documentsCompared: 0,
    drifted: { missing: 0, stale: 0, ghost: 0, deleted_live: 0, embedded: 0 },
    driftedTotal: 0,
    samples: { missing: [], stale: [], ghost: [], deleted_live: [], embedded: [] },
    enqueued: 0,
    orphans: 0,
    durationMs: 0,
  };
  const keying = await bucketKeying(db, collection);
  // A document whose id the id column cannot hold has no row: a ghost, without asking Postgres.
  const rowIds = (ids: readonly string[]) => ids.filter((id) => (keying.hashed ? "id" in canonicalEntityId(keying.idType, id) : fitsBigint(id)));

  async function compareLeaf(range: BucketRange): Promise<void> {
    report.leavesCompared += 1;
    const [rows, states] = await Promise.all([
      rowStates(db, collection, keying, { range }),
      sink.listStates(index, range, sinkOpts),
    ]);
    const candidates: string[] = [];
    for (const eid of new Set([...rows.keys(), ...states.keys()])) if (classifyDrift(rows.get(eid), states.get(eid))) candidates.push(eid);
    if (candidates.length === 0) return;
    // Search is near-realtime and live writes go on: re-read both sides (mget is realtime)
    // so only drift that is still there is counted and repaired.
    const reread = async (ids: readonly string[]): Promise<Map<string, DriftKind>> => {
      const [rows2, states2] = await Promise.all([rowStates(db, collection, keying, { ids: rowIds(ids) }), sink.fetchStates(index, ids, sinkOpts)]);
      const still = new Map<string, DriftKind>();
      for (const eid of ids) {
        const kind = classifyDrift(rows2.get(eid), states2.get(eid));
        if (kind) still.set(eid, kind);
      }
      return still;
    };
    let found = await reread(candidates);
    if (opts.skipQueued) found = await settledDrift(found, reread, (ids) => idsWithQueuedJobs(db, collection.jobName, ids));
    const drifted: string[] = [];
    for (const [eid, kind] of found) {
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

  // Sparse drift (a few documents in millions) is narrowed down to leaves of `leafSize`, so each
  // drifted document costs about that many compared id by id; dense drift (a wiped or stale
  // index: most buckets of a split differ) stops at leaves of `denseLeaf`, so it costs no more
  // round trips than a shallow descent.
  const denseLeaf = Math.max(leafSize, DENSE_LEAF_SIZE);

  /** Summarizes contiguous ranges on both sides and descends into those that differ; returns the entities they hold. */
  async function drill(ranges: readonly BucketRange[]): Promise<number> {
    opts.signal?.throwIfAborted();
    const [mine, theirs] = await Promise.all([summarizeRows(db, collection, keying, ranges), sink.summarize(index, ranges, sinkOpts)]);
    report.bucketsCompared += ranges.length;
    const differing = ranges.filter((_, i) => differs(mine[i]!, theirs[i]!)).length;
    const limit = differing * 2 > ranges.length ? denseLeaf : leafSize;
    let held = 0;
    for (let i = 0; i < ranges.length; i++) {
      held += Math.max(mine[i]!.count, theirs[i]!.count);
      if (!differs(mine[i]!, theirs[i]!)) continue;
      report.bucketsDiffering += 1;
      const r = ranges[i]!;
      const width = r.to - r.from;
      // A leaf by what it holds, not by its width: a wide bucket with few entities (the
      // open-ended ones, a gap between far-apart ids) is compared id by id at once.
      if (width <= BigInt(limit) || Math.max(mine[i]!.count, theirs[i]!.count) <= limit) await compareLeaf(r);
      else await drill(slice(r.from, r.to, (width + BigInt(fanout) - 1n) / BigInt(fanout)));
    }
    return held;
  }

  await sink.refreshIndex?.(index);
  if (keying.hashed) {
    const unkeyed = (await sink.countUnkeyed?.(index, sinkOpts)) ?? 0;
    if (unkeyed > 0) throw new VerifyNeedsRebuildError(collection.name, unkeyed);
  }

  const windows = await verifyWindows(db, collection, { bucketSize, window, ...(opts.from !== undefined ? { from: opts.from } : {}) }, keying);
  const { groups, total } = windows;
  report.idRange = windows.idRange;
  let done = total - groups.reduce((n, g) => n + g.length, 0);
  opts.onProgress?.({ collection: collection.name, total, done, bucketsDiffering: 0, drifted: 0 });
  for (const [i, group] of groups.entries()) {
    const documents = await drill(group);
    report.documentsCompared += documents;
    done += group.length;
    opts.onProgress?.({ collection: collection.name, total, done, bucketsDiffering: report.bucketsDiffering, drifted: report.driftedTotal });
    await opts.onWindow?.({ next: i + 1 < groups.length ? String(groups[i + 1]![0]!.from) : null, documents, report });
  }
  report.orphans = (await sink.countOrphans?.(index, sinkOpts)) ?? 0;
  // Documents from several tables: what a lost fan-out left behind (Postgres only). Not for a
  // rebuild's new index (opts.index): the rows' state is the live index's concern.
  if (opts.index === undefined) {
    const e = await embedDrift(db, collection, { enqueue: enqueue && !opts.onDrift, priority, tag, sampleSize });
    report.drifted.embedded += e.drifted;
    report.driftedTotal += e.drifted;
    report.samples.embedded.push(...e.samples);
    report.enqueued += e.enqueued;
  }
  report.durationMs = performance.now() - started;
  return report;
}

/** The windows of top-level buckets a run compares (see `verifyWindows`). */
export interface VerifyWindows {
  /** Each window's contiguous top-level buckets, in key order; together they cover every key. */
  groups: BucketRange[][];
  /** Top-level buckets of the whole run (a resumed one included those before `from`). */
  total: number;
  /** The key range of the rows, or null when the table is empty (see `VerifyReport.idRange`). */
  idRange: { from: string; to: string } | null;
}

/**
 * The windows of top-level buckets of a collection, over the whole bigint key space: the buckets
 * that hold rows (integer ids), or equal ones over the hashed keys (uuid, text), `window` per
 * window, with an open-ended bucket on either side; from `from` on (a resumed run) when given.
 * The bucketed verify compares them; a scheduled deep run reads one key range per window.
 *
 * @example
 * const { groups } = await verifyWindows(db, products, { bucketSize: 10_000, window: 20 });
 * for (const g of groups) console.log(g[0]!.from, g[g.length - 1]!.to);
 */
export async function verifyWindows(
  db: Kysely<any>,
  collection: Collection<any>,
  o: { bucketSize: number; window: number; from?: string },
  keying?: BucketKeying,
): Promise<VerifyWindows> {
  const k = keying ?? (await bucketKeying(db, collection));
  const top = k.hashed ? await hashedTop(db, collection, o.bucketSize) : await occupiedTop(db, collection, o.bucketSize);
  let groups: BucketRange[][];
  let idRange: VerifyWindows["idRange"] = null;
  if (top.length === 0) {
    groups = [[{ ...ALL_IDS }]];
  } else {
    const from = top[0]!.from;
    const to = top[top.length - 1]!.to;
    idRange = { from: String(from), to: String(to) };
    groups = [];
    if (ALL_IDS.from < from) groups.push([{ from: ALL_IDS.from, to: from }]);
    for (let i = 0; i < top.length; i += o.window) groups.push(top.slice(i, i + o.window));
    if (to < ALL_IDS.to) groups.push([{ from: to, to: ALL_IDS.to }]);
  }
  const total = groups.reduce((n, g) => n + g.length, 0);
  if (o.from !== undefined) groups = resumeAt(groups, BigInt(o.from), o.window);
  return { groups, total, idRange };
}

/**
 * Integer ids: the aligned buckets that hold rows, and one bucket for each gap between them (ids
 * far apart cost one bucket per gap, not one per bucketSize ids).
 */
async function occupiedTop(db: Kysely<any>, collection: Collection<any>, bucketSize: number): Promise<BucketRange[]> {
  const size = BigInt(bucketSize);
  const top: BucketRange[] = [];
  for (const b of await occupiedBuckets(db, collection, bucketSize)) {
    // The buckets at either end of bigint stop at its bounds, not past them.
    const from = max(b * size, ALL_IDS.from);
    const last = top[top.length - 1];
    if (last && last.to < from) top.push({ from: last.to, to: from });
    top.push({ from, to: min(from + size, ALL_IDS.to) });
  }
  return top;
}

/** Hashed keys (uuid, text ids) spread evenly over [0, 2^60): as many equal buckets as `bucketSize` rows fill. */
async function hashedTop(db: Kysely<any>, collection: Collection<any>, bucketSize: number): Promise<BucketRange[]> {
  const rows = await countRows(db, collection);
  if (rows === 0) return [];
  const n = BigInt(Math.ceil(rows / bucketSize));
  return slice(0n, HASHED_KEYS_END, (HASHED_KEYS_END + n - 1n) / n);
}
