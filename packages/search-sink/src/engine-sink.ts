import {
  PermanentSinkError,
  SinkPermissionError,
  type RefusalActor,
  type BucketRange,
  type BucketSummary,
  type DownstreamState,
  type IndexCheck,
  type IndexLayout,
  type Sink,
  type SinkCallOptions,
  type SinkItemResult,
  type ScannedDocument,
  type SinkOperation,
  type TombstonePurgeResult,
  DEFAULT_MAX_BULK_BYTES,
} from "@tether/core";
import { bulkItemResults } from "./bulk-item-results.js";
import type { RefusalContext } from "./permission-denied.js";
import { callEngine, type EngineFailure, type EngineRequest } from "./engine-call.js";
import { bulkLines, ndjson, splitBySize } from "./bulk-body.js";
import { META_FIELD, META_MAPPING } from "./document-meta.js";
import type { MgetDoc, SearchAnswer } from "./engine-answers.js";
import * as aliases from "./index-aliases.js";
import * as lifecycle from "./index-lifecycle.js";
import { keyRange, listBucketStates, summarizeBuckets } from "./bucket-reads.js";
import { purgeTombstonesOf } from "./purge-tombstones.js";
import { scanPages } from "./scan-pages.js";
import { sourceOf, statesOf, versionsOf } from "./mget-reads.js";
import { highestVersionOf } from "./highest-version.js";

export type { EngineFailure, EngineRequest } from "./engine-call.js";
export type { MgetDoc, SearchAnswer } from "./engine-answers.js";

export interface EngineSinkOptions {
  /** Prepended to every index name (tests give each file its own). Default "". */
  indexPrefix?: string;
  /** Timeout of one request when the caller gives none. Default 10000 ms. */
  requestTimeoutMs?: number;
  /** Request-level retries when the caller gives none. Default 2. */
  retries?: number;
  /** Refresh after writes (tests of search only; costly). Default false. */
  refresh?: boolean;
  /** Replicas per shard of the indices `ensureIndex` creates (1 on a cluster). Default 0. */
  replicas?: number;
  /**
   * Largest `_bulk` body sent, in bytes: a write whose documents add up to more is split into
   * several requests before sending, so a batch of large documents never waits on a 413 (many
   * OpenSearch Service instance types refuse bodies over 10 MiB). Default 5 MiB.
   */
  maxBulkBytes?: number;
  /**
   * Who the process is (`tether verify` under `tether_drainer`): a refused privilege throws
   * `SinkPermissionError` naming the verb and the role to grant. Default: unnamed.
   */
  actor?: RefusalActor;
}

const LIST_PAGE = 5_000;

/**
 * A sink for an engine that speaks Elasticsearch's document API: realtime `_mget` of versions,
 * `_bulk` with external versioning (an older version never overwrites a newer one), tombstones
 * for soft deletes, request retries with jittered backoff, a bulk split on 413, and the
 * aggregations `tether verify` compares. A vendor's sink supplies only its client's calls.
 */
export abstract class EngineSink implements Sink {
  abstract readonly kind: string;
  private readonly prefix: string;
  private readonly requestTimeoutMs: number;
  private readonly retries: number;
  protected readonly refreshOnWrite: boolean;
  private readonly replicas: number;
  private readonly maxBulkBytes: number;
  private readonly actor: RefusalActor | undefined;
  /**
   * Whether the engine can aggregate `_version` (Elasticsearch can; OpenSearch has no fielddata
   * for it). Without it `summarize` sums the versions from a scan of ids and versions instead:
   * an edit made behind tether's back keeps the stored hash, and only `_version` shows it.
   */
  protected readonly aggregatesVersions: boolean = true;

  constructor(opts: EngineSinkOptions) {
    this.prefix = opts.indexPrefix ?? "";
    this.requestTimeoutMs = opts.requestTimeoutMs ?? 10_000;
    this.retries = opts.retries ?? 2;
    this.refreshOnWrite = opts.refresh ?? false;
    this.replicas = opts.replicas ?? 0;
    this.maxBulkBytes = opts.maxBulkBytes ?? DEFAULT_MAX_BULK_BYTES;
    this.actor = opts.actor;
  }

  /** Realtime `_mget`; an empty `sourceIncludes` asks for no source at all (`_source: false`). */
  protected abstract mgetDocs(index: string, ids: string[], sourceIncludes: string[], r: EngineRequest): Promise<MgetDoc[]>;
  /**
   * Sends one `_bulk` body (NDJSON, serialized once by the sink, which measured it); resolves
   * with the answer's `items`. `requireAlias` sends `require_alias`: the engine refuses an item
   * whose index name is not an alias instead of creating an index.
   */
  protected abstract bulkItems(body: string, r: EngineRequest, opts?: { requireAlias?: boolean }): Promise<Record<string, unknown>[]>;
  protected abstract searchBody(index: string, body: Record<string, unknown>, r: EngineRequest): Promise<SearchAnswer>;
  /** Opens a scroll (`scroll` keep-alive) with the first page of `body`. */
  protected abstract scrollStart(index: string, body: Record<string, unknown>, keepAlive: string, r: EngineRequest): Promise<SearchAnswer & { _scroll_id?: string }>;
  protected abstract scrollNext(scrollId: string, keepAlive: string, r: EngineRequest): Promise<SearchAnswer & { _scroll_id?: string }>;
  protected abstract scrollClear(scrollId: string): Promise<void>;
  protected abstract createIndex(index: string, body: { settings: Record<string, unknown>; mappings: Record<string, unknown> }): Promise<void>;
  protected abstract refreshNow(index: string): Promise<void>;
  protected abstract clusterStatus(r: EngineRequest): Promise<string>;
  /**
   * One administrative request (aliases, settings, clone); a 404 answer resolves, other errors
   * throw. Without `r`, a long timeout (clones, index creation) and no signal.
   */
  protected abstract adminRequest(method: "GET" | "HEAD" | "PUT" | "POST" | "DELETE", path: string, body?: unknown, r?: EngineRequest): Promise<{ status: number; body: unknown }>;
  /**
   * Reads any error the client throws (or an abort reason); a refused privilege as `refusal`,
   * completed from `context` (the request's index, the process's actor).
   */
  abstract describeFailure(err: unknown, context?: RefusalContext): EngineFailure;
  abstract close(): Promise<void>;

  /** Whether `err` (a client error, or a sink error wrapping one) says the index does not exist. */
  private isMissingIndex(err: unknown): boolean {
    const cause = (err as { cause?: unknown } | null)?.cause;
    return [err, cause].some((e) => e !== undefined && this.describeFailure(e).type === "index_not_found_exception");
  }

  /** The concrete index name for a collection's logical index. */
  indexName(index: string): string {
    return `${this.prefix}${index}`;
  }

  /**
   * Runs one request with retries on `index` (the concrete name, when the request names one);
   * throws RetryableSinkError, PermanentSinkError or SinkPermissionError.
   */
  protected call<T>(what: string, opts: SinkCallOptions | undefined, fn: (r: EngineRequest) => Promise<T>, index?: string): Promise<T> {
    return callEngine(what, opts, { timeoutMs: this.requestTimeoutMs, retries: this.retries }, (err) => this.describeFailure(err, this.context(index)), fn);
  }

  private context(index: string | undefined): RefusalContext {
    return { ...(index ? { index } : {}), ...(this.actor ? { actor: this.actor } : {}) };
  }

  /** A refused privilege as SinkPermissionError (the one sentence), a setting that cannot work as its error; any other error as it came. */
  private refused(err: unknown, index: string): unknown {
    if (err instanceof SinkPermissionError) return err;
    const f = this.describeFailure(err, this.context(index));
    return f.fatal ?? (f.refusal ? new SinkPermissionError(f.refusal, this.actor, { cause: err }) : err);
  }

  /** The body of an index Tether creates: one shard, the configured replicas, tether's metadata mapping merged in. */
  private indexBody(mappings: Record<string, unknown>): { settings: Record<string, unknown>; mappings: Record<string, unknown> } {
    const props = (mappings.properties as Record<string, unknown> | undefined) ?? {};
    return { settings: { number_of_shards: 1, number_of_replicas: this.replicas }, mappings: { ...mappings, properties: { ...props, [META_FIELD]: META_MAPPING } } };
  }

  async ensureIndex(index: string, mappings: Record<string, unknown> = {}): Promise<void> {
    const name = this.indexName(index);
    try {
      await this.createIndex(name, this.indexBody(mappings));
      this.noteLayout(name, "index");
    } catch (err) {
      const f = this.describeFailure(err);
      // After a rebuild the name is an alias of the live index: that is the index existing too.
      const isAlias = f.type === "invalid_index_name_exception" && /already exists as alias/.test(f.description);
      if (f.type !== "resource_already_exists_exception" && !isAlias) throw this.refused(err, name);
      this.noteLayout(name, isAlias ? "alias" : "index");
    }
  }

  async provisionIndex(index: string, mappings: Record<string, unknown> = {}, opts?: SinkCallOptions): Promise<{ created: boolean }> {
    return this.call("provisionIndex", { retries: 0, ...opts }, (r) => lifecycle.provisionIndex(this.adminWith(r), this.indexName(index), this.indexBody(mappings)), this.indexName(index));
  }

  async checkIndex(index: string, mappings: Record<string, unknown> = {}, opts?: SinkCallOptions): Promise<IndexCheck> {
    const name = this.indexName(index);
    const check = await this.call("checkIndex", { retries: 0, ...opts }, (r) => lifecycle.checkIndex(this.adminWith(r), name, this.indexBody(mappings).mappings), name);
    this.noteLayout(name, check.kind === "present" ? check.layout : "missing");
    return check;
  }

  /**
   * Remembers whether a name is a concrete index: writes to one go without `require_alias` (the
   * flag would refuse them). Every layout the sink sees updates it, so the write path rarely
   * pays a round trip to learn it.
   */
  private noteLayout(name: string, kind: IndexLayout["kind"]): void {
    if (kind === "index") this.concreteIndices.add(name);
    else this.concreteIndices.delete(name);
  }

  private adminWith(r: EngineRequest): aliases.AdminRequest {
    return (method, path, body) => this.adminRequest(method, path, body, r);
  }

  /** Administrative requests about `index` (a concrete name), without the caller's bounds; a refusal names it. */
  private admin(index: string): aliases.AdminRequest {
    return (method, path, body) => this.adminRequest(method, path, body).catch((err: unknown) => Promise.reject(this.refused(err, index)));
  }

  async indexLayout(index: string): Promise<IndexLayout> {
    const layout = await aliases.indexLayout(this.admin(this.indexName(index)), this.indexName(index));
    this.noteLayout(this.indexName(index), layout.kind);
    if (layout.kind !== "alias") return layout;
    return { kind: "alias", indices: layout.indices.map((name) => (name.startsWith(this.prefix) ? name.slice(this.prefix.length) : name)) };
  }

  async swapAlias(alias: string, to: string, opts: { keepAs?: string } = {}): Promise<void> {
    await aliases.swapAlias(this.admin(this.indexName(alias)), this.indexName(alias), this.indexName(to), opts.keepAs === undefined ? undefined : this.indexName(opts.keepAs));
    this.noteLayout(this.indexName(alias), "alias");
  }

  async deleteIndex(index: string): Promise<void> {
    await aliases.deleteIndex(this.admin(this.indexName(index)), this.indexName(index));
    this.noteLayout(this.indexName(index), "missing");
  }

  async releaseWriteBlock(index: string): Promise<void> {
    await aliases.releaseWriteBlock(this.admin(this.indexName(index)), this.indexName(index));
  }

  async setBulkLoading(index: string, loading: boolean): Promise<void> {
    await aliases.setBulkLoading(this.admin(this.indexName(index)), this.indexName(index), loading);
  }

  async fetchStates(index: string, ids: readonly string[], opts?: SinkCallOptions): Promise<Map<string, DownstreamState>> {
    if (ids.length === 0) return new Map();
    return statesOf(await this.call("mget", opts, (r) => this.mgetDocs(this.indexName(index), [...ids], [`${META_FIELD}.deleted`, `${META_FIELD}.content`], r), this.indexName(index)));
  }

  async fetchVersions(index: string, ids: readonly string[], opts?: SinkCallOptions): Promise<Map<string, number>> {
    if (ids.length === 0) return new Map();
    // No source includes: the engine answers from its version map, without loading a document.
    return versionsOf(await this.call("mget", opts, (r) => this.mgetDocs(this.indexName(index), [...ids], [], r), this.indexName(index)));
  }

  /**
   * The stored document without tether's metadata (realtime), or undefined when absent or a
   * tombstone. Not part of the Sink contract: the admin console's trace uses it, when present,
   * to say whether the document's content matches the row.
   */
  async readDocument(index: string, id: string, opts?: SinkCallOptions): Promise<Record<string, unknown> | undefined> {
    const [doc] = await this.call("mget", opts, (r) => this.mgetDocs(this.indexName(index), [id], ["*"], r), this.indexName(index));
    return doc ? sourceOf(doc) : undefined;
  }

  /** Names seen to be concrete indices (made before Tether put indices behind aliases): written without `require_alias`. */
  private readonly concreteIndices = new Set<string>();

  /**
   * One bulk write, sent as as many `_bulk` requests as `maxBulkBytes` needs (in order, one
   * after the other); one result per operation.
   */
  async write(index: string, ops: readonly SinkOperation[], opts?: SinkCallOptions): Promise<SinkItemResult[]> {
    if (ops.length === 0) return [];
    const target = this.indexName(index);
    const bodies = ops.map((op) => ndjson(bulkLines(op, target)));
    const results: SinkItemResult[] = [];
    for (const [start, end] of splitBySize(bodies.map((b) => Buffer.byteLength(b)), this.maxBulkBytes)) {
      results.push(...(await this.writeBodies(index, ops.slice(start, end), bodies.slice(start, end), opts)));
    }
    return results;
  }

  private async writeBodies(index: string, ops: readonly SinkOperation[], bodies: readonly string[], opts?: SinkCallOptions): Promise<SinkItemResult[]> {
    const target = this.indexName(index);
    // The engine must never create the index with guessed mappings: every write names an alias.
    const requireAlias = !this.concreteIndices.has(target);
    let items;
    try {
      items = await this.call("bulk", opts, (r) => this.bulkItems(bodies.join(""), r, { requireAlias }), target);
    } catch (err) {
      if (err instanceof PermanentSinkError && this.describeFailure(err.cause).status === 413 && ops.length > 1) {
        // The engine's limit is below ours: split until each item stands or fails alone.
        const mid = Math.ceil(ops.length / 2);
        return [...(await this.writeBodies(index, ops.slice(0, mid), bodies.slice(0, mid), opts)), ...(await this.writeBodies(index, ops.slice(mid), bodies.slice(mid), opts))];
      }
      if (err instanceof PermanentSinkError) return ops.map((op) => ({ id: op.id, status: "permanent" as const, error: err.message }));
      throw err;
    }
    const results = bulkItemResults(ops, items, this.context(target));
    const refused = results.flatMap((r, i) => (r.status !== "ok" && "error" in r && lifecycle.REQUIRE_ALIAS_REFUSAL.test(r.error) ? [i] : []));
    return refused.length === 0 ? results : this.writeRefused(index, ops, results, refused, opts);
  }

  /**
   * Items `require_alias` refused: the name is a concrete index made before Tether put indices
   * behind aliases (written again without the flag, and from now on), or nothing at all (kept
   * as retryable, naming the fix: no write creates an index).
   */
  private async writeRefused(index: string, ops: readonly SinkOperation[], results: SinkItemResult[], refused: number[], opts?: SinkCallOptions): Promise<SinkItemResult[]> {
    const target = this.indexName(index);
    const layout = await this.call("indexLayout", { ...opts, retries: 0 }, (r) => aliases.indexLayout(this.adminWith(r), target), target);
    this.noteLayout(target, layout.kind);
    if (layout.kind === "index") {
      const again = await this.write(index, refused.map((i) => ops[i]!), opts);
      refused.forEach((i, k) => (results[i] = again[k]!));
      return results;
    }
    const error = `index ${target} does not exist: run \`tether migrate\` to create it with the collection's mapping (Tether never lets the engine create an index)`;
    for (const i of refused) results[i] = { id: ops[i]!.id, status: "retryable", error };
    return results;
  }

  async highestVersion(index: string, opts?: SinkCallOptions): Promise<number | undefined> {
    const target = this.indexName(index);
    return highestVersionOf((body) => this.call("highestVersion", opts, (r) => this.searchBody(target, body, r), target)).catch((err: unknown) => {
      if (this.isMissingIndex(err)) return undefined;
      throw err;
    });
  }

  async summarize(index: string, buckets: readonly BucketRange[], opts?: SinkCallOptions): Promise<BucketSummary[]> {
    return summarizeBuckets((body) => this.call("summarize", opts, (r) => this.searchBody(this.indexName(index), body, r), this.indexName(index)), buckets, this.aggregatesVersions);
  }

  async listStates(index: string, range: BucketRange, opts?: SinkCallOptions): Promise<Map<string, DownstreamState>> {
    return listBucketStates((body) => this.call("listStates", opts, (r) => this.searchBody(this.indexName(index), body, r), this.indexName(index)), range);
  }

  /**
   * Tombstones written before `before`, removed page by page (see `purgeTombstonesOf`).
   */
  async purgeTombstones(index: string, p: { before: number; dryRun?: boolean }, opts?: SinkCallOptions): Promise<TombstonePurgeResult> {
    const target = this.indexName(index);
    return purgeTombstonesOf(target, p, {
      refresh: async () => {
        try {
          await this.refreshNow(target);
          return true;
        } catch (err) {
          if (this.isMissingIndex(err)) return false;
          throw this.refused(err, target);
        }
      },
      search: (body) => this.call("purgeTombstones", opts, (r) => this.searchBody(target, body, r), target),
      bulk: (lines) => this.call("purgeTombstones", opts, (r) => this.bulkItems(ndjson(lines), r), target),
    });
  }

  /**
   * Every document (or those of `ids`) with its body, from one scroll: a consistent snapshot of
   * the index, read in index order, the next page requested while the caller works on this one.
   */
  async *scanDocuments(index: string, p: { pageSize?: number; ids?: readonly string[]; range?: BucketRange }, opts?: SinkCallOptions): AsyncIterable<ScannedDocument[]> {
    const target = this.indexName(index);
    const size = p.pageSize ?? LIST_PAGE;
    const filter = [...(p.ids ? [{ ids: { values: [...p.ids] } }] : []), ...(p.range ? [keyRange(p.range)] : [])];
    const query = filter.length > 0 ? { bool: { filter } } : { match_all: {} };
    yield* scanPages({
      size,
      start: () => this.call("scan", opts, (r) => this.scrollStart(target, { size, version: true, sort: ["_doc"], query }, "2m", r), target),
      next: (scrollId) => this.call("scan", opts, (r) => this.scrollNext(scrollId, "2m", r), target),
      clear: (scrollId) => this.scrollClear(scrollId),
      isMissingIndex: (err) => this.isMissingIndex(err),
    });
  }

  async countOrphans(index: string, opts?: SinkCallOptions): Promise<number> {
    return this.countMatching("countOrphans", index, { bool: { must_not: [{ exists: { field: `${META_FIELD}.version` } }] } }, opts);
  }

  /** Documents tether wrote before every id had a bucket key (`tether.key`): the bucketed verify cannot see them. */
  async countUnkeyed(index: string, opts?: SinkCallOptions): Promise<number> {
    const query = { bool: { filter: [{ exists: { field: `${META_FIELD}.version` } }], must_not: [{ exists: { field: `${META_FIELD}.key` } }] } };
    return this.countMatching("countUnkeyed", index, query, opts);
  }

  /** How many documents of the index match `query`; 0 when the index does not exist. */
  private async countMatching(what: string, index: string, query: Record<string, unknown>, opts?: SinkCallOptions): Promise<number> {
    try {
      const res = await this.call(what, opts, (r) => this.searchBody(this.indexName(index), { size: 0, track_total_hits: true, query }, r), this.indexName(index));
      const total = res.hits.total;
      return typeof total === "number" ? total : (total?.value ?? 0);
    } catch (err) {
      if (this.isMissingIndex(err)) return 0;
      throw err;
    }
  }

  /** Makes recent writes visible to search and aggregations (anti-entropy, tests). */
  async refreshIndex(index: string): Promise<void> {
    await this.refreshNow(this.indexName(index)).catch((err: unknown) => Promise.reject(this.refused(err, this.indexName(index))));
  }

  /**
   * Runs a query-DSL search (one attempt, no retries: a search caller answers or fails fast)
   * and returns the matching ids in order and the total.
   *
   * @example
   * const { ids } = await sink.searchIds("annotations", { size: 20, _source: false, query: { term: { user: "acct:ann" } } }, { timeoutMs: 2000 });
   */
  async searchIds(index: string, body: Record<string, unknown>, opts: { timeoutMs: number }): Promise<{ ids: string[]; total: number }> {
    const res = await this.call("search", { timeoutMs: opts.timeoutMs, retries: 0 }, (r) => this.searchBody(this.indexName(index), body, r), this.indexName(index));
    const total = res.hits.total;
    return { ids: res.hits.hits.map((h) => String(h._id)), total: typeof total === "number" ? total : (total?.value ?? 0) };
  }

  /** The cluster's health colour (green, yellow, red); throws when it cannot be asked. */
  async health(opts: { timeoutMs: number }): Promise<string> {
    return this.call("health", { timeoutMs: opts.timeoutMs, retries: 0 }, (r) => this.clusterStatus(r));
  }
}
