import { writeStages, type WriteStage } from "./write-stages.js";

interface Pending<I, R> {
  items: readonly I[];
  resolve: (results: R[]) => void;
  reject: (err: unknown) => void;
  /** performance.now() when it queued (read only while the stage channel has listeners). */
  queuedAt: number;
}

interface Lane<I, R> {
  busy: boolean;
  queue: Pending<I, R>[];
}

export interface NaturalBatcherOptions<K, I, R> {
  /** Sends one batch for `key`; resolves with one result per item, in order. */
  send: (key: K, items: I[]) => Promise<R[]>;
  /** Most items in one batch (a caller's items are never split; one caller may pass it). */
  maxItems: number;
  /** Stage under which each caller's wait for its batch is published (`tether:write-stage`). */
  queueStage?: WriteStage;
}

/**
 * "Natural batching" of concurrent callers' work: while a batch for a key is in flight, the
 * callers that follow queue and leave together, in one batch, when it returns. No timer: an idle
 * caller's work leaves at once; under load, one batch carries what arrived meanwhile (up to
 * `maxItems`). Each caller gets the results of its own items, in order, or the batch's error.
 */
export class NaturalBatcher<K, I, R> {
  private readonly lanes = new Map<K, Lane<I, R>>();

  constructor(private readonly opts: NaturalBatcherOptions<K, I, R>) {}

  submit(key: K, items: readonly I[]): Promise<R[]> {
    return new Promise((resolve, reject) => {
      let lane = this.lanes.get(key);
      if (!lane) {
        lane = { busy: false, queue: [] };
        this.lanes.set(key, lane);
      }
      lane.queue.push({ items, resolve, reject, queuedAt: this.opts.queueStage && writeStages.active() ? performance.now() : 0 });
      if (!lane.busy) void this.drain(key, lane);
    });
  }

  /** Sends what is queued, one batch at a time, until the queue is empty; then forgets the lane. */
  private async drain(key: K, lane: Lane<I, R>): Promise<void> {
    lane.busy = true;
    while (lane.queue.length > 0) {
      const batch = this.take(lane);
      try {
        const results = await this.opts.send(key, batch.items);
        let k = 0;
        for (const p of batch.pending) {
          p.resolve(results.slice(k, k + p.items.length));
          k += p.items.length;
        }
      } catch (err) {
        for (const p of batch.pending) p.reject(err);
      }
    }
    lane.busy = false;
    this.lanes.delete(key);
  }

  /** The head of the queue, up to `maxItems` items (at least one caller). */
  private take(lane: Lane<I, R>): { pending: Pending<I, R>[]; items: I[] } {
    const pending: Pending<I, R>[] = [];
    const items: I[] = [];
    while (lane.queue.length > 0 && (pending.length === 0 || items.length + lane.queue[0]!.items.length <= this.opts.maxItems)) {
      const p = lane.queue.shift()!;
      if (this.opts.queueStage) writeStages.publish(this.opts.queueStage, p.queuedAt, p.items.length);
      pending.push(p);
      for (const item of p.items) items.push(item);
    }
    return { pending, items };
  }
}
