import type { Kysely } from "kysely";
import type { Collection } from "../collection.js";
import { forgetEngineHighest } from "../store/version-floor-store.js";
import { ValidationError } from "../errors.js";
import type { Sink, SinkCallOptions, TombstonePurgeResult } from "../sink.js";

/** Default tombstone retention: 30 days. */
export const DEFAULT_TOMBSTONE_RETENTION_MS = 30 * 24 * 3600 * 1000;

export interface PurgeTombstonesOptions {
  /** Tombstones younger than this are kept. Default 30 days (`DEFAULT_TOMBSTONE_RETENTION_MS`). */
  retentionMs?: number;
  /** Count only. */
  dryRun?: boolean;
  /** The clock (tests). */
  now?: Date;
  sinkOptions?: SinkCallOptions;
  /**
   * Tether's database: a purge that removed tombstones may lower an index's highest version,
   * which the version floor check would take for the index going back; with `db` it is told.
   */
  db?: Kysely<any>;
}

export interface CollectionPurgeResult extends TombstonePurgeResult {
  collection: string;
}

/**
 * Removes each collection's tombstones older than the retention. Deletes (soft and hard) leave a
 * tombstone at the delete's version so that no late write of an older version recreates the
 * document; the engine's own delete marker would last only `index.gc_deletes` (60 s). Past the
 * retention, a write older than the delete could land again — `tether verify` reports it as a
 * ghost and the drainer removes it — so keep the retention above any delay a write can have
 * (a drainer backlog, a paused lane, a replayed queue). The drainer daemon's maintenance leader
 * calls this periodically; `tether purge-tombstones` runs it by hand.
 *
 * @example
 * const results = await purgeTombstones(sink, [annotations], { retentionMs: 7 * 24 * 3600_000 });
 * // [{ collection: "annotation", found: 120, purged: 120, skipped: 0 }]
 */
export async function purgeTombstones(sink: Sink, collections: readonly Collection<any>[], opts: PurgeTombstonesOptions = {}): Promise<CollectionPurgeResult[]> {
  const retentionMs = opts.retentionMs ?? DEFAULT_TOMBSTONE_RETENTION_MS;
  if (!Number.isSafeInteger(retentionMs) || retentionMs < 0) throw new ValidationError("retentionMs", "must be a non-negative integer (milliseconds)");
  if (!sink.purgeTombstones) throw new ValidationError("sink", `the ${sink.kind} sink cannot purge tombstones`);
  const before = (opts.now ?? new Date()).getTime() - retentionMs;
  const out: CollectionPurgeResult[] = [];
  for (const c of collections) {
    const r = await sink.purgeTombstones(c.index, { before, ...(opts.dryRun ? { dryRun: true } : {}) }, opts.sinkOptions);
    out.push({ collection: c.name, ...r });
    if (opts.db && r.purged > 0) await forgetEngineHighest(opts.db, c.name);
  }
  return out;
}
