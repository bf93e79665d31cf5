import type { BucketSummary, DownstreamState, Sink, SinkItemResult, SinkOperation } from "@tether/core";

/**
 * A sink that holds everything already: every entity reads back as a live document at
 * `version`, so each job confirms without a write. Measures the queue machinery alone.
 */
export class NoopSink implements Sink {
  readonly kind: string = "noop";
  constructor(private readonly version = 1) {}

  async ensureIndex(): Promise<void> {}

  async fetchStates(_index: string, ids: readonly string[]): Promise<Map<string, DownstreamState>> {
    return new Map(ids.map((id) => [id, { version: this.version, deleted: false }]));
  }

  async write(_index: string, ops: readonly SinkOperation[]): Promise<SinkItemResult[]> {
    return ops.map((op) => ({ id: op.id, status: "ok" as const }));
  }

  async summarize(_index: string, buckets: readonly unknown[]): Promise<BucketSummary[]> {
    return buckets.map(() => ({ count: 0, hashSum: 0 }));
  }

  async listStates(): Promise<Map<string, DownstreamState>> {
    return new Map();
  }
}
