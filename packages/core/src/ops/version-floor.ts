import type { Kysely } from "kysely";
import type { Collection } from "../collection.js";
import type { Logger } from "../logger.js";
import type { Sink, SinkCallOptions } from "../sink.js";
import { lastEngineHighest, raiseSequenceAbove, recordFloorCheck, upcomingVersion, type RestoreSide } from "../store/version-floor-store.js";

/**
 * The version floor from the engine. Every version comes from `tether.version_seq`, and a
 * version is unique only while the sequence moves forward; a Postgres restored from a backup,
 * recovered to a point in time or failed over to a lagging replica winds it back while the
 * engine keeps newer documents. This check reads the highest version each collection's index
 * holds and, when the sequence would hand out one at or below it, raises the sequence past it:
 * no version the engine holds is handed out again. It runs at `tether migrate`, at a drainer's
 * start and in every maintenance cycle of the leader (one aggregation per collection).
 *
 * The same check sees the index go back: its highest version below the one the last check
 * found (restored from a snapshot, its alias moved to an older index, deleted and made again,
 * a node that lost acknowledged writes). Both are recorded as a restore: `restore_detected`
 * fires and the scheduled fast verify of the collection runs at once (`afterRestoreMs`) until one
 * finishes clean. (A tombstone purge can lower the highest version too, when the newest write of
 * a collection is a delete older than the tombstone retention: a false alarm a clean verify ends.)
 *
 * Between the restore and the first check, writes take versions the engine may hold already:
 * the drainer never confirms those (it compares content hashes) and rewrites them past the
 * engine's document, so they reach search after their grace period instead of at once.
 */

export interface VersionFloorResult {
  collection: string;
  /** The highest version the index holds (undefined: an empty or missing index, nothing to compare). */
  engineHighest?: number;
  /** The version the sequence would have handed out next, before this check. */
  sequenceNext: number;
  /** The sequence was behind the engine and was raised: a restore (or an index edited far ahead). */
  raised: boolean;
  /** A restore this check found: Postgres went back (`raised`), or the index did (its highest version fell). */
  restore?: RestoreSide;
  /** After a raise: the first version handed out from now on is above this. */
  raisedTo?: number;
}

export interface VersionFloorOptions {
  db: Kysely<any>;
  sink: Sink;
  collections: readonly Collection<any>[];
  /** Engine request options (a short timeout for a check on a hot path). */
  call?: SinkCallOptions;
  logger?: Logger;
}

/**
 * Compares `tether.version_seq` with the highest version of each collection's index and raises
 * the sequence above it; records what it found (tether.version_floor), a raise as a restore
 * that `restore_detected` says until a clean verify. A sink without `highestVersion` is skipped.
 *
 * @example
 * const results = await checkVersionFloor({ db, sink, collections: [notes] });
 * for (const r of results) if (r.raised) console.warn(`${r.collection}: the engine held v${r.engineHighest}, above the sequence`);
 */
export async function checkVersionFloor(opts: VersionFloorOptions): Promise<VersionFloorResult[]> {
  const results: VersionFloorResult[] = [];
  if (!opts.sink.highestVersion) return results;
  const before = await lastEngineHighest(opts.db);
  for (const collection of opts.collections) {
    const engineHighest = await opts.sink.highestVersion(collection.index, opts.call);
    const sequenceNext = await upcomingVersion(opts.db);
    if (engineHighest === undefined) {
      results.push({ collection: collection.name, sequenceNext, raised: false });
      continue;
    }
    const raised = engineHighest >= sequenceNext;
    const raisedTo = raised ? await raiseSequenceAbove(opts.db, engineHighest) : undefined;
    const previous = before.get(collection.name);
    // 0: forgotten (a rebuild or a purge lowered it; see forgetEngineHighest).
    const restore: RestoreSide | undefined = raised ? "postgres" : previous !== undefined && previous > 0 && engineHighest < previous ? "index" : undefined;
    await recordFloorCheck(opts.db, { collection: collection.name, engineHighest, sequenceNext, ...(restore ? { restore } : {}) });
    const result: VersionFloorResult = { collection: collection.name, engineHighest, sequenceNext, raised, ...(raisedTo !== undefined ? { raisedTo } : {}), ...(restore ? { restore } : {}) };
    if (restore === "index") {
      opts.logger?.warn(
        { collection: collection.name, engineHighest, before: previous },
        "the index's highest version fell since the last check (restored from a snapshot, its alias moved, deleted and made again?): a fast verify runs at once; see the runbook's restore_detected",
      );
    }
    if (raised) {
      opts.logger?.warn(
        { collection: collection.name, engineHighest, sequenceNext, raisedTo },
        "the index holds versions at or above tether.version_seq (Postgres restored, recovered to a point in time or failed over?): the sequence was raised past them; see the runbook's restore_detected",
      );
    }
    results.push(result);
  }
  return results;
}
