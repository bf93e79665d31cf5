import type { Client } from "@opensearch-project/opensearch";
import type { TransportRequestOptions, TransportRequestPromise } from "@opensearch-project/opensearch/lib/Transport.js";
import { openSearchModule } from "./opensearch-module.js";
import { ANSWER_FILTERS, describePermissionDenied, EngineSink, readRefusal, type EngineFailure, type RefusalContext, type EngineRequest, type EngineSinkOptions, type MgetDoc, type SearchAnswer } from "@tether/search-sink";

export interface OpenSearchSinkOptions extends EngineSinkOptions {
  /** A configured client, or a node URL to build one (no client-side retries: the sink retries). */
  client: Client | string;
}

/** Whole-request failures worth another attempt: no answer, 429, 5xx, timeouts. */
function isRetryable(err: unknown): boolean {
  const { errors } = openSearchModule();
  if (err instanceof errors.ResponseError) return err.statusCode === 429 || err.statusCode >= 500;
  return (
    err instanceof errors.ConnectionError ||
    err instanceof errors.TimeoutError ||
    err instanceof errors.NoLivingConnectionsError ||
    err instanceof errors.DeserializationError
  );
}

function describe(err: unknown, context: RefusalContext): string {
  const { errors } = openSearchModule();
  if (err instanceof errors.ResponseError) {
    const e = (err.body as { error?: { type?: string; reason?: string } } | undefined)?.error;
    const denied = err.statusCode === 403 ? describePermissionDenied(e?.reason, context) : undefined;
    if (denied) return denied;
    return `HTTP ${err.statusCode}${e?.type ? ` ${e.type}` : ""}${e?.reason ? `: ${e.reason}` : ""}`;
  }
  return err instanceof Error ? `${err.name}: ${err.message}` : String(err);
}

/**
 * The OpenSearch sink, on the official client: realtime `_mget` of versions, `_bulk` writes with
 * external versioning, tombstones for soft deletes — the same guarantees as the Elasticsearch
 * sink, whose document API OpenSearch shares.
 *
 * @example
 * const sink = new OpenSearchSink({ client: "http://127.0.0.1:9201" });
 * await sink.ensureIndex("annotations", { properties: { text: { type: "text" } } });
 */
export class OpenSearchSink extends EngineSink {
  readonly kind = "opensearch";
  readonly client: Client;
  // "Fielddata is not supported on field [_version]": no version sums (see EngineSink).
  protected override readonly aggregatesVersions = false;

  constructor(opts: OpenSearchSinkOptions) {
    super(opts);
    this.client = typeof opts.client === "string" ? new (openSearchModule().Client)({ node: opts.client, maxRetries: 0, requestTimeout: 30_000 }) : opts.client;
  }

  /**
   * Sends one request. On the caller's abort it rejects at once and leaves the request to its
   * own timeout: the client's `abort()` surfaces a second, uncaught rejection from its
   * connection layer.
   */
  private async send<T>(r: EngineRequest, fn: (o: TransportRequestOptions) => TransportRequestPromise<{ body: T }>): Promise<T> {
    r.signal?.throwIfAborted();
    const pending = fn({ requestTimeout: r.timeoutMs, maxRetries: 0 });
    if (!r.signal) return (await pending).body;
    const signal = r.signal;
    let onAbort: (() => void) | undefined;
    const aborted = new Promise<never>((_, reject) => {
      onAbort = () => reject(new (openSearchModule().errors.RequestAbortedError)(`request aborted: ${String(signal.reason)}`));
      signal.addEventListener("abort", onAbort, { once: true });
    });
    try {
      return (await Promise.race([pending, aborted])).body;
    } finally {
      signal.removeEventListener("abort", onAbort!);
      // Settles later (answer or timeout) with nobody awaiting it.
      Promise.resolve(pending).catch(() => undefined);
    }
  }

  protected async mgetDocs(index: string, ids: string[], sourceIncludes: string[], r: EngineRequest): Promise<MgetDoc[]> {
    const body = await this.send(r, (o) => this.client.mget({ index, realtime: true, filter_path: ANSWER_FILTERS.mget, ...(sourceIncludes.length > 0 ? { _source_includes: sourceIncludes } : { _source: false }), body: { ids } }, o));
    return (body.docs ?? []) as MgetDoc[];
  }

  protected async bulkItems(ndjson: string, r: EngineRequest, opts: { requireAlias?: boolean } = {}): Promise<Record<string, unknown>[]> {
    // A string body is sent as it is: the sink serialized (and measured) it once.
    const body = await this.send(r, (o) => this.client.bulk({ body: ndjson as never, refresh: this.refreshOnWrite, filter_path: ANSWER_FILTERS.bulk, ...(opts.requireAlias ? { require_alias: true } : {}) }, o));
    return (body.items ?? []) as unknown as Record<string, unknown>[];
  }

  protected async searchBody(index: string, body: Record<string, unknown>, r: EngineRequest): Promise<SearchAnswer> {
    return (await this.send(r, (o) => this.client.search({ index, body: body as never }, o))) as unknown as SearchAnswer;
  }

  protected async scrollStart(index: string, body: Record<string, unknown>, keepAlive: string, r: EngineRequest) {
    return (await this.send(r, (o) => this.client.search({ index, scroll: keepAlive, body: body as never }, o))) as unknown as SearchAnswer & { _scroll_id?: string };
  }

  protected async scrollNext(scrollId: string, keepAlive: string, r: EngineRequest) {
    return (await this.send(r, (o) => this.client.scroll({ body: { scroll_id: scrollId, scroll: keepAlive } }, o))) as unknown as SearchAnswer & { _scroll_id?: string };
  }

  protected async scrollClear(scrollId: string): Promise<void> {
    await this.client.clearScroll({ body: { scroll_id: scrollId } });
  }

  protected async createIndex(index: string, body: { settings: Record<string, unknown>; mappings: Record<string, unknown> }): Promise<void> {
    await this.client.indices.create({ index, body: body as never });
  }

  protected async refreshNow(index: string): Promise<void> {
    await this.client.indices.refresh({ index });
  }

  protected async clusterStatus(r: EngineRequest): Promise<string> {
    return String((await this.send(r, (o) => this.client.cluster.health({}, o))).status);
  }

  protected async adminRequest(method: "GET" | "HEAD" | "PUT" | "POST" | "DELETE", path: string, body?: unknown, r?: EngineRequest): Promise<{ status: number; body: unknown }> {
    const request = { method, path, ...(body === undefined ? {} : { body: body as never }) };
    if (r) {
      // Through send: the caller's signal and timeout bound it.
      // The whole response as `send`'s body: the status matters here (a 404 resolves).
      const res = await this.send<{ statusCode?: number | null; body: unknown }>(r, (o) => this.client.transport.request(request, { ...o, ignore: [404] }).then((whole) => ({ body: whole })) as never);
      return { status: res.statusCode ?? 200, body: res.body };
    }
    const res = await this.client.transport.request(request, { ignore: [404], requestTimeout: 120_000, maxRetries: 0 });
    return { status: res.statusCode ?? 200, body: res.body };
  }

  describeFailure(err: unknown, context: RefusalContext = {}): EngineFailure {
    const description = describe(err, context);
    const { errors } = openSearchModule();
    if (err instanceof errors.RequestAbortedError) return { kind: "aborted", description };
    const response = err instanceof errors.ResponseError ? err : undefined;
    const type = (response?.body as { error?: { type?: string } } | undefined)?.error?.type;
    const reason = response?.statusCode === 403 ? (response.body as { error?: { reason?: string } } | undefined)?.error?.reason : undefined;
    const refusal = readRefusal(reason, context);
    return {
      kind: isRetryable(err) ? "retryable" : "permanent",
      ...(response ? { status: response.statusCode } : {}),
      ...(type ? { type } : {}),
      description,
      ...(refusal ? { refusal, ...(context.actor ? { actor: context.actor } : {}) } : {}),
    };
  }

  async close(): Promise<void> {
    await this.client.close();
  }
}
