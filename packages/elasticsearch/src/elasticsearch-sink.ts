import type { Client } from "@elastic/elasticsearch";
import { elasticsearchModule } from "./elasticsearch-module.js";
import { ANSWER_FILTERS, EngineSink, readRefusal, type EngineFailure, type RefusalContext, type EngineRequest, type EngineSinkOptions, type MgetDoc, type SearchAnswer } from "@tether/search-sink";
import { describeError, isRetryableRequestError, refusedReason } from "./classify-error.js";
import { fingerprintProblem, type FingerprintTrust } from "./ca-fingerprint-problem.js";

export interface ElasticsearchSinkOptions extends EngineSinkOptions {
  /** A configured client, or a node URL to build one (no client-side retries: the sink retries). */
  client: Client | string;
  /**
   * When the client checks a CA fingerprint: its setting. A node whose chain holds no CA then
   * fails every call with a `ConnectionSettingError` naming it. Default: none.
   */
  fingerprint?: FingerprintTrust;
}

/**
 * The Elasticsearch sink: realtime `_mget` of versions, `_bulk` writes with external
 * versioning (so an older version never overwrites a newer one), tombstones for soft deletes.
 *
 * @example
 * const sink = new ElasticsearchSink({ client: "http://127.0.0.1:9200" });
 * await sink.ensureIndex("annotations", { properties: { text: { type: "text" } } });
 */
export class ElasticsearchSink extends EngineSink {
  readonly kind = "elasticsearch";
  readonly client: Client;
  private readonly fingerprint: FingerprintTrust | undefined;

  constructor(opts: ElasticsearchSinkOptions) {
    super(opts);
    this.fingerprint = opts.fingerprint;
    this.client = typeof opts.client === "string" ? new (elasticsearchModule().Client)({ node: opts.client, maxRetries: 0, requestTimeout: 30_000 }) : opts.client;
  }

  private transport(r: EngineRequest) {
    return { ...(r.signal ? { signal: r.signal } : {}), requestTimeout: r.timeoutMs, maxRetries: 0 };
  }

  protected async mgetDocs(index: string, ids: string[], sourceIncludes: string[], r: EngineRequest): Promise<MgetDoc[]> {
    const res = await this.client.mget({ index, ids, realtime: true, filter_path: ANSWER_FILTERS.mget, ...(sourceIncludes.length > 0 ? { _source_includes: sourceIncludes } : { _source: false }) }, this.transport(r));
    return (res.docs ?? []) as MgetDoc[];
  }

  protected async bulkItems(body: string, r: EngineRequest, opts: { requireAlias?: boolean } = {}): Promise<Record<string, unknown>[]> {
    // A string body is sent as it is: the sink serialized (and measured) it once.
    const res = await this.client.bulk({ operations: body as never, refresh: this.refreshOnWrite, filter_path: ANSWER_FILTERS.bulk, ...(opts.requireAlias ? { require_alias: true } : {}) }, this.transport(r));
    return (res.items ?? []) as Record<string, unknown>[];
  }

  protected async searchBody(index: string, body: Record<string, unknown>, r: EngineRequest): Promise<SearchAnswer> {
    return (await this.client.search({ index, ...body }, this.transport(r))) as SearchAnswer;
  }

  protected async scrollStart(index: string, body: Record<string, unknown>, keepAlive: string, r: EngineRequest) {
    return (await this.client.search({ index, scroll: keepAlive, ...body }, this.transport(r))) as SearchAnswer & { _scroll_id?: string };
  }

  protected async scrollNext(scrollId: string, keepAlive: string, r: EngineRequest) {
    return (await this.client.scroll({ scroll_id: scrollId, scroll: keepAlive }, this.transport(r))) as SearchAnswer & { _scroll_id?: string };
  }

  protected async scrollClear(scrollId: string): Promise<void> {
    await this.client.clearScroll({ scroll_id: scrollId });
  }

  protected async createIndex(index: string, body: { settings: Record<string, unknown>; mappings: Record<string, unknown> }): Promise<void> {
    await this.client.indices.create({ index, settings: body.settings, mappings: body.mappings as never });
  }

  protected async refreshNow(index: string): Promise<void> {
    await this.client.indices.refresh({ index });
  }

  protected async clusterStatus(r: EngineRequest): Promise<string> {
    return (await this.client.cluster.health({}, this.transport(r))).status;
  }

  protected async adminRequest(method: "GET" | "HEAD" | "PUT" | "POST" | "DELETE", path: string, body?: unknown, r?: EngineRequest): Promise<{ status: number; body: unknown }> {
    const res = await this.client.transport.request(
      { method, path, ...(body === undefined ? {} : { body: body as never }) },
      { ignore: [404], meta: true, ...(r ? this.transport(r) : { requestTimeout: 120_000, maxRetries: 0 }) },
    );
    return { status: res.statusCode ?? 200, body: res.body };
  }

  describeFailure(err: unknown, context: RefusalContext = {}): EngineFailure {
    const description = describeError(err, context);
    const { errors } = elasticsearchModule();
    if (err instanceof errors.RequestAbortedError) return { kind: "aborted", description };
    const status = err instanceof errors.ResponseError ? err.statusCode : undefined;
    const type = err instanceof errors.ResponseError ? (err.meta?.body as { error?: { type?: string } } | undefined)?.error?.type : undefined;
    const refusal = readRefusal(refusedReason(err), context);
    const fatal = fingerprintProblem(err, this.fingerprint);
    return {
      kind: isRetryableRequestError(err) ? "retryable" : "permanent",
      ...(status !== undefined ? { status } : {}),
      ...(type ? { type } : {}),
      description,
      ...(refusal ? { refusal, ...(context.actor ? { actor: context.actor } : {}) } : {}),
      ...(fatal ? { fatal } : {}),
    };
  }

  async close(): Promise<void> {
    await this.client.close();
  }
}
