import { Client, errors } from "@elastic/elasticsearch";
import pRetry, { AbortError } from "p-retry";
import {
  PermanentSinkError,
  RetryableSinkError,
  type BucketRange,
  type BucketSummary,
  type DownstreamState,
  type Sink,
  type SinkCallOptions,
  type SinkItemResult,
  type SinkOperation,
} from "@tether/core";
import { describeError, isPermanentItemStatus, isRetryableRequestError } from "./classify-error.js";
import { documentMeta, META_FIELD, META_MAPPING } from "./document-meta.js";

export interface ElasticsearchSinkOptions {
  /** A configured client, or a node URL to build one (no client-side retries: the sink retries). */
  client: Client | string;
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
}

type BulkItem = { _id?: string | null; status: number; error?: { type?: string; reason?: string | null } | null; result?: string };

/**
 * The Elasticsearch sink: realtime `_mget` of versions, `_bulk` writes with external
 * versioning (so an older version never overwrites a newer one), tombstones for soft deletes.
 *
 * @example
 * const sink = new ElasticsearchSink({ client: "http://127.0.0.1:9200" });
 * await sink.ensureIndex("annotations", { properties: { text: { type: "text" } } });
 */
export class ElasticsearchSink implements Sink {
  readonly kind = "elasticsearch";
  readonly client: Client;
  private readonly prefix: string;
  private readonly requestTimeoutMs: number;
  private readonly retries: number;
  private readonly refresh: boolean;
  private readonly replicas: number;

  constructor(opts: ElasticsearchSinkOptions) {
    this.client = typeof opts.client === "string" ? new Client({ node: opts.client, maxRetries: 0, requestTimeout: 30_000 }) : opts.client;
    this.prefix = opts.indexPrefix ?? "";
    this.requestTimeoutMs = opts.requestTimeoutMs ?? 10_000;
    this.retries = opts.retries ?? 2;
    this.refresh = opts.refresh ?? false;
    this.replicas = opts.replicas ?? 0;
  }

  /** The concrete index name for a collection's logical index. */
  indexName(index: string): string {
    return `${this.prefix}${index}`;
  }

  private async call<T>(what: string, opts: SinkCallOptions | undefined, fn: (transport: { signal?: AbortSignal; requestTimeout: number; maxRetries: 0 }) => Promise<T>): Promise<T> {
    const transport = { ...(opts?.signal ? { signal: opts.signal } : {}), requestTimeout: opts?.timeoutMs ?? this.requestTimeoutMs, maxRetries: 0 as const };
    try {
      return await pRetry(
        async () => {
          try {
            return await fn(transport);
          } catch (err) {
            if (opts?.signal?.aborted || err instanceof errors.RequestAbortedError) throw new AbortError(new RetryableSinkError(`${what} aborted: ${describeError(opts?.signal?.reason ?? err)}`, { cause: err }));
            if (!isRetryableRequestError(err)) throw new AbortError(new PermanentSinkError(`${what} failed: ${describeError(err)}`, { cause: err }));
            throw new RetryableSinkError(`${what} failed: ${describeError(err)}`, { cause: err });
          }
        },
        { retries: opts?.retries ?? this.retries, minTimeout: 100, maxTimeout: 2_000, factor: 3, randomize: true, ...(opts?.signal ? { signal: opts.signal } : {}) },
      );
    } catch (err) {
      if (err instanceof RetryableSinkError || err instanceof PermanentSinkError) throw err;
      throw new RetryableSinkError(`${what} failed: ${describeError(err)}`, { cause: err });
    }
  }

  async ensureIndex(index: string, mappings: Record<string, unknown> = {}): Promise<void> {
    const props = (mappings.properties as Record<string, unknown> | undefined) ?? {};
    try {
      await this.client.indices.create({
        index: this.indexName(index),
        settings: { number_of_shards: 1, number_of_replicas: this.replicas },
        mappings: { ...mappings, properties: { ...props, [META_FIELD]: META_MAPPING } } as never,
      });
    } catch (err) {
      const type = ((err as errors.ResponseError).meta?.body as { error?: { type?: string } } | undefined)?.error?.type;
      if (type !== "resource_already_exists_exception") throw err;
    }
  }

  async fetchStates(index: string, ids: readonly string[], opts?: SinkCallOptions): Promise<Map<string, DownstreamState>> {
    const out = new Map<string, DownstreamState>();
    if (ids.length === 0) return out;
    const res = await this.call("mget", opts, (t) =>
      this.client.mget<{ tether?: { deleted?: boolean } }>(
        { index: this.indexName(index), ids: [...ids], realtime: true, _source_includes: [`${META_FIELD}.deleted`] },
        t,
      ),
    );
    for (const doc of res.docs) {
      if ("error" in doc && doc.error) {
        if (doc.error.type === "index_not_found_exception") continue;
        throw new RetryableSinkError(`mget item ${doc._id} failed: ${doc.error.type}: ${doc.error.reason ?? ""}`);
      }
      if ("found" in doc && doc.found) {
        out.set(doc._id, { version: Number(doc._version ?? 0), deleted: doc._source?.tether?.deleted === true });
      }
    }
    return out;
  }

  /**
   * The stored document without tether's metadata (realtime), or undefined when absent or a
   * tombstone. Not part of the Sink contract: the admin console's trace uses it, when present,
   * to say whether the document's content matches the row.
   */
  async readDocument(index: string, id: string, opts?: SinkCallOptions): Promise<Record<string, unknown> | undefined> {
    const docs = await this.call("mget", opts, (t) => this.client.mget<Record<string, unknown>>({ index: this.indexName(index), ids: [id], realtime: true }, t));
    const doc = docs.docs[0];
    if (!doc || !("found" in doc) || !doc.found || !doc._source) return undefined;
    const { [META_FIELD]: meta, ...source } = doc._source;
    if ((meta as { deleted?: boolean } | undefined)?.deleted === true) return undefined;
    return source;
  }

  private toBulk(op: SinkOperation, target: string): unknown[] {
    const versionType = "force" in op && op.force ? "external_gte" : "external";
    switch (op.kind) {
      case "index":
        return [
          { index: { _index: target, _id: op.id, version: op.version, version_type: versionType } },
          { ...op.document, [META_FIELD]: documentMeta(op.id, op.version, false) },
        ];
      case "tombstone":
        return [{ index: { _index: target, _id: op.id, version: op.version, version_type: versionType } }, { [META_FIELD]: documentMeta(op.id, op.version, true) }];
      case "delete":
        return [{ delete: { _index: target, _id: op.id, version: op.version, version_type: "external" } }];
    }
  }

  async write(index: string, ops: readonly SinkOperation[], opts?: SinkCallOptions): Promise<SinkItemResult[]> {
    if (ops.length === 0) return [];
    const target = this.indexName(index);
    let res;
    try {
      res = await this.call("bulk", opts, (t) => this.client.bulk({ operations: ops.flatMap((op) => this.toBulk(op, target)), refresh: this.refresh }, t));
    } catch (err) {
      const status = ((err as PermanentSinkError).cause as errors.ResponseError | undefined)?.statusCode;
      if (err instanceof PermanentSinkError && status === 413 && ops.length > 1) {
        // The request as a whole is too large: split until each item stands or fails alone.
        const mid = Math.ceil(ops.length / 2);
        return [...(await this.write(index, ops.slice(0, mid), opts)), ...(await this.write(index, ops.slice(mid), opts))];
      }
      if (err instanceof PermanentSinkError) return ops.map((op) => ({ id: op.id, status: "permanent" as const, error: err.message }));
      throw err;
    }
    // Match results by id, not position: a proxy or a partial failure may drop items.
    const byId = new Map<string, BulkItem>();
    for (const item of res.items) {
      const r = Object.values(item)[0] as BulkItem | undefined;
      if (r?._id) byId.set(r._id, r);
    }
    return ops.map((op): SinkItemResult => {
      const r = byId.get(op.id);
      if (!r) return { id: op.id, status: "retryable", error: "no result for this item in the bulk response" };
      if (r.status >= 200 && r.status < 300) return { id: op.id, status: "ok" };
      if (r.status === 404 && op.kind === "delete") return { id: op.id, status: "ok" };
      if (r.status === 409) {
        const current = /current version \[(\d+)\]/.exec(r.error?.reason ?? "")?.[1];
        return { id: op.id, status: "conflict", ...(current ? { currentVersion: Number(current) } : {}) };
      }
      const error = `HTTP ${r.status} ${r.error?.type ?? ""}: ${r.error?.reason ?? ""}`.trim();
      return isPermanentItemStatus(r.status, r.error?.type ?? undefined) ? { id: op.id, status: "permanent", error } : { id: op.id, status: "retryable", error };
    });
  }

  async summarize(index: string, buckets: readonly BucketRange[], opts?: SinkCallOptions): Promise<BucketSummary[]> {
    if (buckets.length === 0) return [];
    const res = await this.call("summarize", opts, (t) =>
      this.client.search(
        {
          index: this.indexName(index),
          size: 0,
          track_total_hits: false,
          query: { bool: { filter: [{ term: { [`${META_FIELD}.deleted`]: false } }] } },
          aggs: {
            b: {
              range: { field: `${META_FIELD}.key`, ranges: buckets.map((b) => ({ from: b.from, to: b.to })), keyed: false },
              aggs: { h: { sum: { field: `${META_FIELD}.hash` } }, v: { sum: { field: "_version" } } },
            },
          },
        },
        t,
      ),
    );
    const agg = (res.aggregations?.b as { buckets: { doc_count: number; h: { value: number }; v: { value: number } }[] } | undefined)?.buckets ?? [];
    return buckets.map((_, i) => ({ count: agg[i]?.doc_count ?? 0, hashSum: agg[i]?.h.value ?? 0, versionSum: agg[i]?.v.value ?? 0 }));
  }

  async listStates(index: string, range: BucketRange, opts?: SinkCallOptions): Promise<Map<string, DownstreamState>> {
    const out = new Map<string, DownstreamState>();
    let after: unknown[] | undefined;
    for (;;) {
      const res = await this.call("listStates", opts, (t) =>
        this.client.search<{ tether?: { deleted?: boolean } }>(
          {
            index: this.indexName(index),
            size: 5_000,
            version: true,
            _source: [`${META_FIELD}.deleted`],
            query: { range: { [`${META_FIELD}.key`]: { gte: range.from, lt: range.to } } },
            sort: [{ [`${META_FIELD}.key`]: "asc" }],
            ...(after ? { search_after: after as never } : {}),
          },
          t,
        ),
      );
      const hits = res.hits.hits;
      for (const h of hits) out.set(String(h._id), { version: Number(h._version ?? 0), deleted: h._source?.tether?.deleted === true });
      if (hits.length < 5_000) break;
      after = hits[hits.length - 1]!.sort as unknown[];
    }
    return out;
  }

  /** Makes recent writes visible to search and aggregations (anti-entropy, tests). */
  async refreshIndex(index: string): Promise<void> {
    await this.client.indices.refresh({ index: this.indexName(index) });
  }

  async close(): Promise<void> {
    await this.client.close();
  }
}
