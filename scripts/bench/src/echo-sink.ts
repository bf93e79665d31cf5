import type { DownstreamState, SinkItemResult, SinkOperation } from "@tether/core";
import { NoopSink } from "./noop-sink.js";

/**
 * A sink with no documents of its own: a read finds nothing, except what was written since that
 * document was last read, which it answers once and forgets. A drain of bumped rows then writes
 * each document and confirms it on read-back, as against a real engine, while the sink holds no
 * more than the batches in flight: the drainer's memory is what is left to measure.
 */
export class EchoSink extends NoopSink {
  override readonly kind = "echo";
  private readonly written = new Map<string, DownstreamState>();

  override async fetchStates(_index: string, ids: readonly string[]): Promise<Map<string, DownstreamState>> {
    const found = new Map<string, DownstreamState>();
    for (const id of ids) {
      const state = this.written.get(id);
      if (state === undefined) continue;
      found.set(id, state);
      this.written.delete(id);
    }
    return found;
  }

  override async write(_index: string, ops: readonly SinkOperation[]): Promise<SinkItemResult[]> {
    for (const op of ops) {
      if (op.kind === "delete") this.written.delete(op.id);
      else this.written.set(op.id, { version: op.version, deleted: op.kind === "tombstone" });
    }
    return ops.map((op) => ({ id: op.id, status: "ok" as const }));
  }
}
