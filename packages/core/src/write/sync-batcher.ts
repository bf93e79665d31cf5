import type { Sink, SinkItemResult, SinkOperation } from "../sink.js";
import { writeStages } from "./write-stages.js";

interface Pending {
  ops: readonly SinkOperation[];
  resolve: (results: SinkItemResult[]) => void;
  reject: (err: unknown) => void;
  /** performance.now() when it queued (read only while the stage channel has listeners). */
  queuedAt: number;
}

interface Lane {
  busy: boolean;
  queue: Pending[];
}

/**
 * Coalesces the direct syncs of concurrent writes to one index: while a `_bulk` is in flight,
 * the writes that follow queue and leave together in one request when it returns. No timer: an
 * idle writer's sync leaves at once; under load, one request carries what arrived meanwhile
 * (up to `maxOps`), so the engine answers a few large bulks instead of many one-item ones.
 * Each caller gets the results of its own operations, in order.
 */
export class SyncBatcher {
  private readonly lanes = new Map<string, Lane>();

  constructor(
    private readonly sink: Sink,
    private readonly opts: { timeoutMs: number; maxOps: number },
  ) {}

  write(index: string, ops: readonly SinkOperation[]): Promise<SinkItemResult[]> {
    return new Promise((resolve, reject) => {
      let lane = this.lanes.get(index);
      if (!lane) {
        lane = { busy: false, queue: [] };
        this.lanes.set(index, lane);
      }
      lane.queue.push({ ops, resolve, reject, queuedAt: writeStages.active() ? performance.now() : 0 });
      if (!lane.busy) void this.flush(index, lane);
    });
  }

  private async flush(index: string, lane: Lane): Promise<void> {
    lane.busy = true;
    try {
      while (lane.queue.length > 0) {
        const batch: Pending[] = [];
        let n = 0;
        while (lane.queue.length > 0 && (batch.length === 0 || n + lane.queue[0]!.ops.length <= this.opts.maxOps)) {
          const p = lane.queue.shift()!;
          writeStages.publish("queue", p.queuedAt, p.ops.length);
          batch.push(p);
          n += p.ops.length;
        }
        try {
          const ops = batch.flatMap((p) => p.ops);
          const results = await writeStages.time("bulk", ops.length, () =>
            this.sink.write(index, ops, { timeoutMs: this.opts.timeoutMs, retries: 0, signal: AbortSignal.timeout(this.opts.timeoutMs) }),
          );
          let k = 0;
          for (const p of batch) {
            p.resolve(results.slice(k, k + p.ops.length));
            k += p.ops.length;
          }
        } catch (err) {
          for (const p of batch) p.reject(err);
        }
      }
    } finally {
      lane.busy = false;
    }
  }
}
