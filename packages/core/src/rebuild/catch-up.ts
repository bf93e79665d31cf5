import type { Kysely } from "kysely";
import type { Collection } from "../collection.js";
import type { Sink, SinkCallOptions } from "../sink.js";
import { deepVerifyCollection } from "../verify/deep-verify.js";
import { hasIntegerIds, verifyCollection, type VerifyOptions } from "../verify/verify-collection.js";
import { repairInto } from "./repair-into.js";

export interface CatchUpOptions {
  /** Bucket settings of the verify passes. */
  verify?: Pick<VerifyOptions, "bucketSize" | "leafSize" | "fanout" | "window">;
  /** Passes before giving up on a pass that finds nothing (live writes can keep drift coming). */
  maxRounds: number;
  sinkOptions?: SinkCallOptions;
  signal?: AbortSignal;
  /** Verify progress of the current pass (buckets, or documents for non-integer ids). */
  onProgress?: (done: number, total: number) => void;
}

export interface CatchUpResult {
  /** Verify passes run. */
  rounds: number;
  /** Entities the passes found drifted. */
  drifted: number;
  /** Writes the repairs made. */
  repaired: number;
  /** Whether the last pass found nothing drifted. */
  settled: boolean;
}

/**
 * Proves `index` equal to the rows: a verify pass (bucketed for integer ids, the deep pass
 * otherwise) whose drift is written straight into `index`, repeated until a pass finds none or
 * `maxRounds` passes ran.
 */
export async function catchUp(db: Kysely<any>, sink: Sink, collection: Collection<any>, index: string, o: CatchUpOptions): Promise<CatchUpResult> {
  const result: CatchUpResult = { rounds: 0, drifted: 0, repaired: 0, settled: false };
  const integerIds = await hasIntegerIds(db, collection);
  while (result.rounds < o.maxRounds) {
    o.signal?.throwIfAborted();
    result.rounds += 1;
    let found = 0;
    const onDrift = async (ids: string[]) => {
      found += ids.length;
      result.repaired += await repairInto(db, sink, collection, index, ids, o.sinkOptions);
    };
    const common = { index, onDrift, ...(o.sinkOptions ? { sinkOptions: o.sinkOptions } : {}), ...(o.signal ? { signal: o.signal } : {}) };
    if (integerIds) {
      await verifyCollection(db, sink, collection, { ...o.verify, ...common, onProgress: (p) => o.onProgress?.(p.done, p.total) });
    } else {
      await deepVerifyCollection(db, sink, collection, { ...common, keepOrphans: true, onProgress: (p) => o.onProgress?.(p.scanned, p.scanned) });
    }
    result.drifted += found;
    if (found === 0) {
      result.settled = true;
      break;
    }
  }
  return result;
}
