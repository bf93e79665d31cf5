import type { Sink, SinkItemResult, SinkOperation } from "../sink.js";
import { NaturalBatcher } from "./natural-batcher.js";
import { writeStages } from "./write-stages.js";

/**
 * Coalesces the direct syncs of concurrent writes to one index: while a `_bulk` is in flight,
 * the writes that follow queue and leave together in one request when it returns. No timer: an
 * idle writer's sync leaves at once; under load, one request carries what arrived meanwhile
 * (up to `maxOps`), so the engine answers (and syncs its translog for) a few large bulks instead
 * of many one-item ones. Each caller gets the results of its own operations, in order.
 */
export class SyncBatcher {
  private readonly batcher: NaturalBatcher<string, SinkOperation, SinkItemResult>;

  constructor(sink: Sink, opts: { timeoutMs: number; maxOps: number }) {
    this.batcher = new NaturalBatcher({
      maxItems: opts.maxOps,
      queueStage: "queue",
      send: async (index, ops) => {
        // A cleared timer, not AbortSignal.timeout: that one fires (an event and an error) after every request.
        const abort = new AbortController();
        const timer = setTimeout(() => abort.abort(new Error(`direct sync bulk timed out after ${opts.timeoutMs} ms`)), opts.timeoutMs);
        try {
          return await writeStages.time("bulk", ops.length, () => sink.write(index, ops, { timeoutMs: opts.timeoutMs, retries: 0, signal: abort.signal }));
        } finally {
          clearTimeout(timer);
        }
      },
    });
  }

  write(index: string, ops: readonly SinkOperation[]): Promise<SinkItemResult[]> {
    return this.batcher.submit(index, ops);
  }
}
