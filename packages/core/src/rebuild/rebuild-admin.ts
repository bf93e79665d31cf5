import type { Kysely } from "kysely";
import type { Collection } from "../collection.js";
import { TetherError } from "../errors.js";
import type { Sink, SinkCallOptions } from "../sink.js";
import { deleteRebuild, readRebuild, type RebuildState } from "../store/index-rebuild-store.js";
import { catchUp } from "./catch-up.js";
import { aliasSink, exclusively } from "./rebuild-index.js";
import { rebuildPauseReason } from "./lane-hold.js";
import { releasePausedName } from "../store/paused-lane-store.js";

/**
 * The collection's rebuild as recorded: running or interrupted (`loading`, `catching_up`), or
 * swapped with its previous index kept for a rollback; undefined when there is none.
 *
 * @example
 * const s = await rebuildStatus(db, products); // { phase: "loading", rowsLoaded: 420000, rowsTotal: 1000000, ... }
 */
export async function rebuildStatus(db: Kysely<any>, collection: Collection<any>): Promise<RebuildState | undefined> {
  return readRebuild(db, collection.name);
}

/**
 * Drops an interrupted rebuild before its swap: the half-built index and the record, and the
 * pause of the collection's lane a rebuild killed in its verify passes left behind. The alias
 * and the index in service were never touched.
 *
 * @example
 * await discardRebuild(db, sink, products);
 */
export async function discardRebuild(db: Kysely<any>, sink: Sink, collection: Collection<any>): Promise<RebuildState> {
  const engine = aliasSink(sink);
  return exclusively(db, collection, async () => {
    const state = await readRebuild(db, collection.name);
    if (!state) throw new TetherError("E_REBUILD_NONE", `no rebuild of ${collection.name} to discard`);
    if (state.phase === "swapped") throw new TetherError("E_REBUILD_SWAPPED", `the rebuild of ${collection.name} is already in service: roll it back or finish it`);
    // A process killed between the swap's write block and its atomic step left the block behind.
    await engine.releaseWriteBlock?.(state.alias);
    await engine.deleteIndex(state.target);
    await releasePausedName(db, collection.jobName, rebuildPauseReason(collection));
    await deleteRebuild(db, collection.name);
    return state;
  });
}

/**
 * Ends a swapped rebuild: drops the previous index kept for a rollback.
 *
 * @example
 * await finishRebuild(db, sink, products);
 */
export async function finishRebuild(db: Kysely<any>, sink: Sink, collection: Collection<any>): Promise<RebuildState> {
  const engine = aliasSink(sink);
  return exclusively(db, collection, async () => {
    const state = await swappedState(db, collection, "finish");
    if (state.previous) await engine.deleteIndex(state.previous);
    await deleteRebuild(db, collection.name);
    return state;
  });
}

/**
 * Returns the alias to the index it served before the last rebuild: that index is first
 * brought up to date with the rows (it missed the writes since the swap), the alias swapped
 * back atomically, checked once more, and the rebuilt index dropped.
 *
 * @example
 * await rollbackRebuild(db, sink, products);
 */
export async function rollbackRebuild(
  db: Kysely<any>,
  sink: Sink,
  collection: Collection<any>,
  opts: { sinkOptions?: SinkCallOptions; maxCatchUpRounds?: number } = {},
): Promise<RebuildState & { repaired: number }> {
  const engine = aliasSink(sink);
  return exclusively(db, collection, async () => {
    const state = await swappedState(db, collection, "roll back");
    if (!state.previous) throw new TetherError("E_REBUILD_NO_PREVIOUS", `${collection.name} had no index before its rebuild: nothing to roll back to`);
    const o = { maxRounds: opts.maxCatchUpRounds ?? 5, ...(opts.sinkOptions ? { sinkOptions: opts.sinkOptions } : {}) };
    const before = await catchUp(db, engine, collection, state.previous, o);
    await engine.swapAlias(state.alias, state.previous);
    const after = await catchUp(db, engine, collection, state.alias, o);
    await engine.deleteIndex(state.target);
    await deleteRebuild(db, collection.name);
    return { ...state, repaired: before.repaired + after.repaired };
  });
}

async function swappedState(db: Kysely<any>, collection: Collection<any>, what: string): Promise<RebuildState> {
  const state = await readRebuild(db, collection.name);
  if (!state) throw new TetherError("E_REBUILD_NONE", `no rebuild of ${collection.name} to ${what}`);
  if (state.phase !== "swapped") {
    throw new TetherError("E_REBUILD_NOT_SWAPPED", `the rebuild of ${collection.name} has not swapped yet (${state.phase}): resume or discard it`);
  }
  return state;
}
