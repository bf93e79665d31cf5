import { forgetEngineHighest } from "../store/version-floor-store.js";
import type { Kysely } from "kysely";
import type { Collection } from "../collection.js";
import { TetherError } from "../errors.js";
import type { Logger } from "../logger.js";
import { resolveOptions, type OptionDefaults } from "../resolve-options.js";
import type { Sink, SinkCallOptions } from "../sink.js";
import { countRows } from "../store/collection-store.js";
import { insertRebuild, readRebuild, setRebuildPhase, withRebuildLock, type RebuildState } from "../store/index-rebuild-store.js";
import type { VerifyOptions } from "../verify/verify-collection.js";
import { bulkLoad } from "./bulk-load.js";
import { catchUp } from "./catch-up.js";
import { holdLane } from "./lane-hold.js";

export type { RebuildPhase, RebuildState } from "../store/index-rebuild-store.js";

export interface RebuildOptions {
  /** Rows per bulk request of the load. Default 5000. */
  batchSize?: number;
  /** Bulk requests in flight during the load. Default 4. */
  concurrency?: number;
  /** Continue the interrupted rebuild of this collection (from its last loaded page). Default false. */
  resume?: boolean;
  /** Verify passes before the swap, each repairing what it found, until one finds nothing. Default 5. */
  maxCatchUpRounds?: number;
  /** Bucket settings of the verify passes. */
  verify?: Pick<VerifyOptions, "bucketSize" | "leafSize" | "fanout" | "window">;
  sinkOptions?: SinkCallOptions;
  /** Stops between pages and verify round trips; the rebuild can be resumed or discarded. */
  signal?: AbortSignal;
  /** For a progress bar: after each loaded page and each verify window. */
  onProgress?: (p: RebuildProgress) => void;
  logger?: Logger;
}

export interface RebuildProgress {
  collection: string;
  /** loading: rows into the new index; catching_up: verify and repair it; swapped: the alias points at it. */
  phase: "loading" | "catching_up" | "swapped";
  done: number;
  total: number;
}

export interface RebuildResult {
  collection: string;
  /** The name readers and writers use: now an alias of `index`. */
  alias: string;
  /** The new index serving the alias. */
  index: string;
  /** The index it served before, kept for `rollbackRebuild` until `finishRebuild` (null: none). */
  previous: string | null;
  /** Whether this call resumed an interrupted rebuild. */
  resumed: boolean;
  /** Rows bulk-loaded by this call. */
  rowsLoaded: number;
  /** Verify passes before the swap, and the entities they repaired in the new index. */
  catchUpRounds: number;
  caughtUp: number;
  /**
   * Jobs of the collection's lane, enqueued while it was paused for the verify passes and the
   * swap, made due at once after it: the drainer checks those writes against the new index.
   */
  jobsExpeditedAfterSwap: number;
  loadMs: number;
  catchUpMs: number;
  swapMs: number;
  durationMs: number;
}

export const REBUILD_DEFAULTS: OptionDefaults<Pick<RebuildOptions, "batchSize" | "concurrency" | "resume" | "maxCatchUpRounds">> = {
  batchSize: [5_000, "positive integer"],
  concurrency: [4, "positive integer"],
  resume: [false, "boolean"],
  maxCatchUpRounds: [5, "positive integer"],
};

/** The Sink methods a rebuild needs, or an error naming the missing ones. */
export function aliasSink(sink: Sink): Required<Pick<Sink, "indexLayout" | "swapAlias" | "deleteIndex">> & Sink {
  const missing = (["indexLayout", "swapAlias", "deleteIndex"] as const).filter((m) => typeof sink[m] !== "function");
  if (missing.length > 0) throw new TetherError("E_REBUILD_UNSUPPORTED", `the ${sink.kind} sink cannot rebuild an index: it lacks ${missing.join(", ")}`);
  return sink as Required<Pick<Sink, "indexLayout" | "swapAlias" | "deleteIndex">> & Sink;
}

/** Runs `fn` as the only rebuild of `collection` (an advisory lock), or fails saying one is running. */
export async function exclusively<T>(db: Kysely<any>, collection: Collection<any>, fn: () => Promise<T>): Promise<T> {
  const r = await withRebuildLock(db, collection.name, fn);
  if (!r) throw new TetherError("E_REBUILD_RUNNING", `a rebuild of ${collection.name} is running in another process`);
  return r.value;
}

/** UTC to the millisecond, e.g. 20261124t110500123. */
const stamp = () => new Date().toISOString().replace(/[-:.]/g, "").replace(/Z$/, "").toLowerCase();

/**
 * Rebuilds a collection's index with no downtime: creates a new index from the collection's
 * mapping, bulk-loads every row into it while live writes go on to the index in service, proves
 * it equal to the rows with verify passes that repair what the live writes meanwhile changed,
 * then points the collection's index name (an alias from then on) at it in one atomic step, and
 * keeps the previous index for `rollbackRebuild` until `finishRebuild`. The collection's lane
 * is paused from the verify passes to the swap, so the jobs of the writes made meanwhile are
 * confirmed against the new index (made due at once after the swap), not the old one. Killed half-way, the alias is untouched; `resume: true` continues after the
 * last loaded page, `discardRebuild` drops the half-built index.
 *
 * @example
 * // products' mapping changed in the config: ship it without a moment of missing results.
 * const r = await rebuildIndex(db, sink, products, { onProgress: (p) => bar.update(p.done) });
 * // later, once the new mapping proved itself:
 * await finishRebuild(db, sink, products); // or rollbackRebuild(db, sink, products)
 */
export async function rebuildIndex(db: Kysely<any>, sink: Sink, collection: Collection<any>, opts: RebuildOptions = {}): Promise<RebuildResult> {
  const started = performance.now();
  const o = resolveOptions(REBUILD_DEFAULTS, opts);
  const engine = aliasSink(sink);
  const sinkOptions = opts.sinkOptions ?? {};
  const progress = (phase: RebuildProgress["phase"], done: number, total: number) => opts.onProgress?.({ collection: collection.name, phase, done, total });
  return exclusively(db, collection, async () => {
    let state = await readRebuild(db, collection.name);
    if (state?.phase === "swapped") {
      throw new TetherError(
        "E_REBUILD_PENDING",
        `the last rebuild of ${collection.name} keeps its previous index ${state.previous ?? "(none)"} for a rollback: finish it (drop that index) or roll it back first`,
      );
    }
    if (state && !o.resume) {
      throw new TetherError(
        "E_REBUILD_INTERRUPTED",
        `an interrupted rebuild of ${collection.name} into ${state.target} exists (${state.phase}, ${state.rowsLoaded} of ${state.rowsTotal} rows loaded): resume it or discard it`,
      );
    }
    if (!state && o.resume) throw new TetherError("E_REBUILD_NONE", `no interrupted rebuild of ${collection.name} to resume`);
    const resumed = state !== undefined;
    if (!state) state = await begin(db, engine, collection);
    opts.logger?.info({ collection: collection.name, target: state.target, resumed, phase: state.phase, loaded: state.rowsLoaded }, "rebuild: loading");

    const loadStarted = performance.now();
    let rowsLoaded = 0;
    if (state.phase === "loading") {
      await engine.ensureIndex(state.target, collection.mappings);
      await engine.setBulkLoading?.(state.target, true);
      const base = state.rowsLoaded;
      const total = state.rowsTotal;
      progress("loading", base, total);
      rowsLoaded = await bulkLoad(db, engine, collection, state.target, {
        batchSize: o.batchSize,
        concurrency: o.concurrency,
        after: state.loadedThrough ?? undefined,
        sinkOptions,
        ...(opts.signal ? { signal: opts.signal } : {}),
        onPage: (n) => progress("loading", base + n, Math.max(total, base + n)),
      });
      await engine.setBulkLoading?.(state.target, false);
      await setRebuildPhase(db, collection.name, "catching_up");
    }
    const loadMs = performance.now() - loadStarted;

    const catchUpStarted = performance.now();
    const verifyOpts = {
      maxRounds: o.maxCatchUpRounds,
      sinkOptions,
      ...(opts.verify ? { verify: opts.verify } : {}),
      ...(opts.signal ? { signal: opts.signal } : {}),
    };
    // The lane is paused from the verify passes to the swap: the writes made meanwhile keep
    // their jobs, which the drainer checks against the new index once it serves the alias.
    const lane = await holdLane(db, collection);
    let before: Awaited<ReturnType<typeof catchUp>>;
    let previous: string | null;
    let catchUpMs: number;
    let swapMs: number;
    let jobsExpeditedAfterSwap = 0;
    try {
      before = await catchUp(db, engine, collection, state.target, { ...verifyOpts, onProgress: (d, t) => progress("catching_up", d, t) });
      if (!before.settled) opts.logger?.warn({ collection: collection.name, rounds: before.rounds }, "rebuild: live writes kept drift coming; swapping, the drainer checks their jobs against the new index");
      catchUpMs = performance.now() - catchUpStarted;
      const swapStarted = performance.now();
      previous = await swap(db, engine, collection, state);
      swapMs = performance.now() - swapStarted;
    } finally {
      jobsExpeditedAfterSwap = await lane.release();
    }
    progress("swapped", jobsExpeditedAfterSwap, jobsExpeditedAfterSwap);
    opts.logger?.info({ collection: collection.name, alias: state.alias, index: state.target, previous, jobsExpeditedAfterSwap }, "rebuild: swapped");

    return {
      collection: collection.name,
      alias: state.alias,
      index: state.target,
      previous,
      resumed,
      rowsLoaded,
      catchUpRounds: before.rounds,
      caughtUp: before.repaired,
      jobsExpeditedAfterSwap,
      loadMs,
      catchUpMs,
      swapMs,
      durationMs: performance.now() - started,
    };
  });
}

/** Records a new rebuild: the target's name and what the alias serves now. */
async function begin(db: Kysely<any>, engine: ReturnType<typeof aliasSink>, collection: Collection<any>): Promise<RebuildState> {
  const layout = await engine.indexLayout(collection.index);
  if (layout.kind === "alias" && layout.indices.length !== 1) {
    throw new TetherError("E_REBUILD_LAYOUT", `${collection.index} is an alias of ${layout.indices.length} indices (${layout.indices.join(", ")}): a rebuild needs it to serve one`);
  }
  const previous = layout.kind === "alias" ? layout.indices[0]! : layout.kind === "index" ? collection.index : null;
  // A name nothing holds yet: never an index in service, never a leftover with old documents.
  const base = `${collection.index}__${stamp()}`;
  let target = base;
  for (let n = 2; (await engine.indexLayout(target)).kind !== "missing"; n++) target = `${base}_${n}`;
  return insertRebuild(db, { collection: collection.name, alias: collection.index, target, previous, rowsTotal: await countRows(db, collection) });
}

/**
 * Points the alias at the target. An index made before any rebuild holds the alias's name
 * itself: it is kept as `<name>__initial` (see `Sink.swapAlias`). Returns the previous index's
 * name as kept.
 */
async function swap(db: Kysely<any>, engine: ReturnType<typeof aliasSink>, collection: Collection<any>, state: RebuildState): Promise<string | null> {
  // The state already says whether the name was a concrete index when the rebuild began (the
  // engine's sink copies it only while it still is one, so a resumed swap passes it again safely).
  const initial = `${state.alias}__initial`;
  const concrete = state.previous === state.alias;
  await engine.swapAlias(state.alias, state.target, concrete ? { keepAs: initial } : {});
  const previous = concrete ? initial : state.previous;
  await setRebuildPhase(db, collection.name, "swapped", previous);
  // The new index's highest version may be below the old one's: not the index going back.
  await forgetEngineHighest(db, collection.name);
  return previous;
}
