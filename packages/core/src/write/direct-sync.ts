import { SpanStatusCode, trace } from "@opentelemetry/api";
import type { Collection } from "../collection.js";
import type { Logger } from "../logger.js";
import { instruments } from "../ops/metrics.js";
import type { Sink, SinkOperation } from "../sink.js";
import { desiredOperation, rowVersion } from "../verify/verification-matrix.js";
import type { CircuitBreaker } from "./circuit-breaker.js";
import type { SyncBatcher } from "./sync-batcher.js";
import { writeStages } from "./write-stages.js";

/** An entity a transaction touched: its row as committed, or its id and version if hard-deleted. */
export interface EntityChange<Row> {
  id: string;
  row?: Row;
  /** Hard deletes: the version the downstream delete carries. */
  deletedVersion?: number;
}

/**
 * "breaker_open": not attempted, the circuit breaker is open after consecutive failures (the
 * job is committed; the drainer does the work).
 */
export type DirectSyncOutcome = "ok" | "error" | "timeout" | "skipped" | "deferred" | "breaker_open";

export function changeOperation<Row>(collection: Collection<Row>, c: EntityChange<Row>): SinkOperation {
  // A hard delete leaves a tombstone: a removed document would be guarded only for index.gc_deletes.
  if (c.row === undefined) return { kind: "tombstone", id: c.id, version: c.deletedVersion ?? 1 };
  return desiredOperation(collection, c.id, c.row, rowVersion(collection, c.row));
}

/** Why a direct sync gave up waiting. */
class DirectSyncTimeout extends Error {}

/**
 * What `start` resolves to, or a rejection after `ms` (the work goes on, unawaited). The timer
 * starts before the work (whose own request timers must not fire first) and is cleared as soon
 * as the work settles, so a sync that answers in time costs no timer firing, event or error.
 */
function withinTimeout<T>(ms: number, start: (timedOut: AbortSignal) => Promise<T>): Promise<T> {
  const abort = new AbortController();
  return new Promise<T>((resolve, reject) => {
    const timer = setTimeout(() => {
      const reason = new DirectSyncTimeout(`direct sync timed out after ${ms} ms`);
      abort.abort(reason);
      reject(reason);
    }, ms);
    start(abort.signal).then(
      (v) => {
        clearTimeout(timer);
        resolve(v);
      },
      (err: unknown) => {
        clearTimeout(timer);
        reject(err);
      },
    );
  });
}

/**
 * One best-effort write of committed changes with a tight timeout and no retries. Never throws:
 * the job already in the table guarantees the drainer repairs whatever this misses.
 */
export async function directSync<Row>(
  sink: Sink,
  collection: Collection<Row>,
  changes: readonly EntityChange<Row>[],
  opts: { timeoutMs: number; logger: Logger; breaker?: CircuitBreaker; batcher?: SyncBatcher },
): Promise<DirectSyncOutcome> {
  if (changes.length === 0) return "skipped";
  if (opts.breaker && !opts.breaker.tryAcquire()) {
    instruments().directSync.add(1, { outcome: "breaker_open" });
    return "breaker_open";
  }
  const tracer = trace.getTracer("tether");
  return tracer.startActiveSpan("tether.direct_sync", async (span) => {
    const started = performance.now();
    let outcome: DirectSyncOutcome;
    try {
      const ops = writeStages.timeSync("build", changes.length, () => changes.map((c) => changeOperation(collection, c)));
      // Without a batcher the request is this write's own: the timeout aborts it.
      const results = await withinTimeout(opts.timeoutMs, (signal) =>
        opts.batcher ? opts.batcher.write(collection.index, ops) : sink.write(collection.index, ops, { signal, timeoutMs: opts.timeoutMs, retries: 0 }),
      );
      const failed = results.filter((r) => r.status === "retryable" || r.status === "permanent");
      outcome = failed.length === 0 ? "ok" : "error";
      // The engine answered: items it refused are the drainer's, not a reason to stop trying.
      opts.breaker?.record("ok");
      if (failed.length > 0) {
        opts.logger.warn({ collection: collection.name, failed: failed.slice(0, 5) }, "direct sync: some items failed; the drainer will repair them");
      }
    } catch (err) {
      outcome = err instanceof DirectSyncTimeout ? "timeout" : "error";
      opts.breaker?.record("failure");
      opts.logger.warn({ collection: collection.name, err: String(err), outcome }, "direct sync failed; the drainer will repair it");
    }
    instruments().directSync.add(1, { outcome });
    writeStages.publish("sync", started, changes.length);
    span.setAttribute("tether.outcome", outcome);
    if (outcome !== "ok") span.setStatus({ code: SpanStatusCode.ERROR, message: outcome });
    span.end();
    return outcome;
  });
}
