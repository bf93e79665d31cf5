/**
 * The downstream contract. Core knows no vendor: an Elasticsearch or OpenSearch adapter (or any
 * other store) implements `Sink`, and proves it with the conformance suite in @tether/testkit
 * (`describeSinkConformance`) against a real engine; the scenarios in test/ run against each.
 */

/** What the downstream holds for one entity. Absent entities are absent from the map. */
export interface DownstreamState {
  version: number;
  /** A tombstone: the entity was soft-deleted at `version`. */
  deleted: boolean;
  /**
   * The content hash the writer stored with a live document (`tether.content`, see
   * `contentHash`), when the sink records one. A document at the row's version whose hash
   * differs from the document built from the row is not the row's (a version handed out again
   * after Postgres went back in time): the drainer never confirms it.
   */
  content?: string;
}

export type SinkOperation =
  /**
   * Write the document at `version` (external versioning: never over a newer one). `force`
   * also rewrites an equal version (external_gte), never an older one.
   */
  | { kind: "index"; id: string; version: number; document: Record<string, unknown>; force?: boolean }
  /** Write a tombstone at `version` (soft delete). */
  | { kind: "tombstone"; id: string; version: number; force?: boolean }
  /**
   * Remove the document; `version` must exceed what is stored. Tether writes tombstones for
   * deletes (hard or soft) and removes documents only when purging tombstones past retention.
   */
  | { kind: "delete"; id: string; version: number };

export type SinkItemStatus =
  | { status: "ok" }
  /**
   * The downstream already holds this version or a newer one: nothing was overwritten.
   * `currentVersion`, when the sink reports it, is what it holds — possibly a delete marker
   * that a read cannot see (a document deleted behind tether's back).
   */
  | { status: "conflict"; currentVersion?: number }
  | { status: "retryable"; error: string }
  | { status: "permanent"; error: string };

export type SinkItemResult = { id: string } & SinkItemStatus;

export interface SinkCallOptions {
  signal?: AbortSignal;
  /** Per-request timeout; the direct sync uses a tight one. */
  timeoutMs?: number;
  /** Request-level retries (connection errors, 429/503 for the whole request). */
  retries?: number;
}

/**
 * One id-range bucket of a collection, for anti-entropy. Bounds are inclusive-exclusive and
 * exact bigints: ids span the whole of Postgres' bigint, far past a double's 2^53, so `to` may
 * be 2^63 (one past the largest bigint). A sink sends the bounds to its engine as decimal
 * strings, `[from, to - 1]` inclusive, never as JSON numbers.
 */
export interface BucketRange {
  from: bigint;
  to: bigint;
}

/** The whole id space of a bigint key: every id any bucket can hold. */
export const ALL_IDS: Readonly<BucketRange> = Object.freeze({ from: -(2n ** 63n), to: 2n ** 63n });

export interface BucketSummary {
  count: number;
  /** Sum of `entityHash(id, version)` over live (not deleted) entities in the bucket. */
  hashSum: number;
  /**
   * Sum of the versions the downstream itself holds (not the stored metadata) over the same
   * live entities, when the sink can compute it: catches edits made behind tether's back
   * that kept the stored hash (a partial update bumps only the downstream's own version).
   */
  versionSum?: number;
}

/** What a tombstone purge did (or, in a dry run, would do). */
export interface TombstonePurgeResult {
  /** Tombstones older than the cutoff found. */
  found: number;
  /** Of those, removed (0 in a dry run). */
  purged: number;
  /** Replaced by a newer write since they were read: left alone. */
  skipped: number;
}

/** One document as a full scan reads it (`tether verify --deep`). */
export interface ScannedDocument {
  id: string;
  /** The engine's own version of the document. */
  version: number;
  /** False for a document without tether's metadata (written by something else): an orphan. */
  tethered: boolean;
  deleted: boolean;
  /** The content hash stored at write time (`tether.content`), when the writer recorded one. */
  content?: string;
  /** The body without tether's metadata (absent for tombstones). */
  source?: Record<string, unknown>;
}

/**
 * What an index name stands for downstream: nothing yet, a concrete index (created by
 * `ensureIndex` before any rebuild), or an alias naming the indices behind it (after
 * `rebuildIndex` swapped one in). Names are logical: as the sink's other methods take them.
 */
export type IndexLayout = { kind: "missing" } | { kind: "index" } | { kind: "alias"; indices: string[] };

/** One declared field the index's mapping lacks (`actual` null) or maps otherwise. */
export interface MappingProblem {
  /** Dotted path, e.g. `tags` or `title.raw`. */
  field: string;
  declared: string;
  actual: string | null;
}

/**
 * What `checkIndex` found under a collection's index name: nothing (run `tether migrate`), or an
 * index (behind an alias, or a concrete index of that name made before Tether owned its indexes)
 * with the declared fields its mapping lacks or contradicts (fix: `tether rebuild`).
 */
export type IndexCheck = { kind: "missing" } | { kind: "present"; layout: "alias" | "index"; problems: MappingProblem[] };

export interface Sink {
  /** For logs and metrics, e.g. "elasticsearch". */
  readonly kind: string;
  /** Creates the index with tether's metadata mapping merged into `mappings`, if missing. */
  ensureIndex(index: string, mappings?: Record<string, unknown>): Promise<void>;
  /**
   * Optional: creates the collection's index behind an alias of that name, with tether's
   * metadata mapping merged into `mappings`, when the name holds nothing. `tether migrate` calls
   * it: Tether, not the engine's auto-creation, makes every index. Answers whether it created one.
   */
  provisionIndex?(index: string, mappings?: Record<string, unknown>, opts?: SinkCallOptions): Promise<{ created: boolean }>;
  /** Optional: what the name holds, and the declared fields its mapping lacks or contradicts (see `IndexCheck`). */
  checkIndex?(index: string, mappings?: Record<string, unknown>, opts?: SinkCallOptions): Promise<IndexCheck>;
  /** Reads current states, realtime (no refresh needed). Throws RetryableSinkError when unreachable. */
  fetchStates(index: string, ids: readonly string[], opts?: SinkCallOptions): Promise<Map<string, DownstreamState>>;
  /**
   * Optional: current versions only, realtime and without reading any document source (absent
   * ids are missing from the map). The drainer reads back writes the sink reported done with
   * it: the version is what confirms them, and a source read costs the engine far more.
   */
  fetchVersions?(index: string, ids: readonly string[], opts?: SinkCallOptions): Promise<Map<string, number>>;
  /**
   * Optional: the highest version any document (tombstones included) of the index holds, or
   * undefined when the index holds none or does not exist. The version floor (`checkVersionFloor`)
   * raises Tether's version sequence above it, so no version the engine holds is handed out
   * again after Postgres went back in time. Cheap: one aggregation the engine answers from its
   * index of the metadata's `version` field. A search: it sees what the index's last refresh
   * made visible (a second behind realtime by default).
   */
  highestVersion?(index: string, opts?: SinkCallOptions): Promise<number | undefined>;
  /** One bulk write; one result per operation, in order. Throws RetryableSinkError when unreachable. */
  write(index: string, ops: readonly SinkOperation[], opts?: SinkCallOptions): Promise<SinkItemResult[]>;
  /** Count and hash sum of live documents per bucket of keys (`entityKey` of their ids). */
  summarize(index: string, buckets: readonly BucketRange[], opts?: SinkCallOptions): Promise<BucketSummary[]>;
  /** Every document state whose key (`entityKey` of its id) is in [from, to). */
  listStates(index: string, range: BucketRange, opts?: SinkCallOptions): Promise<Map<string, DownstreamState>>;
  /**
   * Optional: makes recent writes visible to `summarize` and `listStates`, for sinks whose
   * searches lag their realtime reads. `verifyCollection` calls it before comparing.
   */
  refreshIndex?(index: string): Promise<void>;
  /**
   * Optional: removes the tombstones written before `before` (epoch ms). Each is removed only
   * while it still is that tombstone (a versioned delete one above it; a newer write since makes
   * it a conflict, skipped). `dryRun` only counts. Maintenance calls it after the tombstone
   * retention (`purgeTombstones` in core).
   */
  purgeTombstones?(index: string, opts: { before: number; dryRun?: boolean }, call?: SinkCallOptions): Promise<TombstonePurgeResult>;
  /**
   * Optional: every document of the index (or of `ids`, or those whose bucket key lies in
   * `range`, tombstones included) with its body, page by page, from one consistent snapshot of
   * the index. `tether verify --deep` compares each with the document rebuilt from its row; a
   * scheduled deep run reads one key range per window, so it can resume after the last one.
   */
  scanDocuments?(index: string, opts: { pageSize?: number; ids?: readonly string[]; range?: BucketRange }, call?: SinkCallOptions): AsyncIterable<ScannedDocument[]>;
  /** Optional: how many documents of the index carry no tether metadata (orphans). */
  countOrphans?(index: string, call?: SinkCallOptions): Promise<number>;
  /**
   * Optional: how many of tether's documents carry no bucket key (`entityKey`), written before
   * uuid and text ids had one. The bucketed verify of such a collection waits for `tether
   * rebuild`, which writes every document again with its key.
   */
  countUnkeyed?(index: string, call?: SinkCallOptions): Promise<number>;
  /**
   * Optional, with `swapAlias` and `deleteIndex`: what zero-downtime rebuilds (`rebuildIndex`)
   * need. What `index` is downstream (see `IndexLayout`).
   */
  indexLayout?(index: string): Promise<IndexLayout>;
  /**
   * Points the alias `alias` at `to` and nothing else, in one atomic step: readers and writers
   * of `alias` move from one index to the other between two requests. When `alias` is still a
   * concrete index, it is first copied to `keepAs` (a clone under a brief write block, which
   * writers wait out as retryable) and removed in that same atomic step.
   */
  swapAlias?(alias: string, to: string, opts?: { keepAs?: string }): Promise<void>;
  /** Removes an index (not an alias); absent is fine. */
  deleteIndex?(index: string): Promise<void>;
  /** Lifts a write block `swapAlias` left on a concrete index when its process died mid-swap. */
  releaseWriteBlock?(index: string): Promise<void>;
  /**
   * Optional: settings for a bulk load into an index nobody reads yet (`loading`: no refresh),
   * and back (`loading: false`: the engine's default refresh).
   */
  setBulkLoading?(index: string, loading: boolean): Promise<void>;
  /** Optional: releases connections; processes call it at shutdown. */
  close?(): Promise<void>;
}
