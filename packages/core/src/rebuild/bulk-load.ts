import type { Kysely } from "kysely";
import type { Collection } from "../collection.js";
import { TetherError } from "../errors.js";
import type { Sink, SinkCallOptions, SinkItemResult, SinkOperation } from "../sink.js";
import { idColumnType, rowPageAfter } from "../store/collection-store.js";
import { recordLoaded } from "../store/index-rebuild-store.js";
import { desiredOperation, rowVersion } from "../verify/verification-matrix.js";

export interface BulkLoadOptions {
  /** Rows per bulk request. */
  batchSize: number;
  /** Bulk requests in flight while the next pages are read. */
  concurrency: number;
  /** Start after this id (a resumed load). */
  after: string | undefined;
  sinkOptions?: SinkCallOptions;
  signal?: AbortSignal;
  /** After each page is written and recorded: rows loaded by this call. */
  onPage?: (rows: number) => void;
}

const ITEM_ATTEMPTS = 6;

/**
 * Writes every row after `after`, in id order, into `index` at the row's own version (external
 * versioning: a newer write that got there first is kept). Pages are read while earlier ones
 * are being written; each page is recorded as loaded (`tether.index_rebuild.loaded_through`)
 * only once the engine took all of it and every page before it, so a resumed load starts after
 * the last page that is wholly in. Items the engine refuses for good stop the load with their
 * ids and the engine's reason (a mapping that does not fit the rows).
 */
export async function bulkLoad(db: Kysely<any>, sink: Sink, collection: Collection<any>, index: string, o: BulkLoadOptions): Promise<number> {
  const idType = await idColumnType(db, collection);
  const inFlight: { done: Promise<void>; last: string; rows: number }[] = [];
  let loaded = 0;
  const settleOldest = async () => {
    const page = inFlight.shift()!;
    await page.done;
    await recordLoaded(db, collection.name, page.last, page.rows);
    loaded += page.rows;
    o.onPage?.(loaded);
  };
  try {
    for (let after = o.after; ; ) {
      o.signal?.throwIfAborted();
      const page = await rowPageAfter(db, collection, idType, after, o.batchSize);
      if (page.last === undefined) break;
      const ops: SinkOperation[] = [];
      const refused: string[] = [];
      for (const { id, row } of page.rows) {
        try {
          ops.push(desiredOperation(collection, id, row, rowVersion(collection, row)));
        } catch (err) {
          refused.push(`${id}: cannot build its document: ${String(err)}`);
        }
      }
      if (refused.length > 0) throw refusal(collection, index, refused);
      const done = writeAll(sink, collection, index, ops, o);
      done.catch(() => undefined);
      inFlight.push({ done, last: page.last, rows: page.rows.length });
      after = page.last;
      if (inFlight.length >= o.concurrency) await settleOldest();
    }
    while (inFlight.length > 0) await settleOldest();
  } finally {
    // A failed load leaves no write unawaited behind it.
    await Promise.allSettled(inFlight.map((p) => p.done));
  }
  return loaded;
}

function refusal(collection: Collection<any>, index: string, items: string[]): TetherError {
  return new TetherError(
    "E_REBUILD_REFUSED",
    `the new index ${index} refused ${items.length} row(s) of ${collection.name}, e.g. ${items.slice(0, 3).join("; ")}. ` +
      "Fix the mapping (then discard this rebuild and start again) or the rows (then resume it)",
  );
}

/** One page into the index; retryable items again with backoff, permanent ones end the load. */
async function writeAll(sink: Sink, collection: Collection<any>, index: string, ops: SinkOperation[], o: BulkLoadOptions): Promise<void> {
  let pending = ops;
  for (let attempt = 1; pending.length > 0; attempt++) {
    const results: SinkItemResult[] = await sink.write(index, pending, { retries: 5, ...o.sinkOptions, ...(o.signal ? { signal: o.signal } : {}) });
    const permanent = results.filter((r) => r.status === "permanent");
    if (permanent.length > 0) throw refusal(collection, index, permanent.map((r) => `${r.id}: ${"error" in r ? r.error : ""}`));
    const retry = new Set(results.filter((r) => r.status === "retryable").map((r) => r.id));
    pending = pending.filter((op) => retry.has(op.id));
    if (pending.length === 0) return;
    if (attempt >= ITEM_ATTEMPTS) {
      throw new TetherError("E_REBUILD_RETRYABLE", `${pending.length} row(s) of ${collection.name} were not taken by ${index} after ${attempt} attempts (e.g. ${results.find((r) => r.status === "retryable" && "error" in r)?.id}); resume the rebuild when the engine is healthy`);
    }
    await new Promise((r) => setTimeout(r, Math.min(5_000, 200 * 2 ** attempt)));
  }
}
