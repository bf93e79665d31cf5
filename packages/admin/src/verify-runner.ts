import {
  createVerifyRun,
  failAbandonedVerifyRuns,
  failVerifyRun,
  finishVerifyRun,
  updateVerifyRunProgress,
  verifyCollection,
  type Collection,
  type VerifyRunRow,
} from "@tether/core/internal";
import type { ResolvedAdminOptions } from "./admin-options.js";

/** Drifted ids kept per kind for a run's result list. */
const RESULT_SAMPLE = 200;
/** A running row without progress for this long belongs to a process that died. */
const ABANDONED_AFTER_SECONDS = 600;

/**
 * Runs anti-entropy verifications started from the console in this process, persisting their
 * progress and results as they go so any replica (and a later visit) can read them. Closing
 * aborts runs in flight and marks them failed.
 */
export class VerifyRunner {
  private readonly inFlight = new Map<string, { controller: AbortController; done: Promise<void> }>();

  constructor(private readonly o: ResolvedAdminOptions) {}

  async start(collection: Collection<any>, startedBy: string): Promise<VerifyRunRow> {
    await failAbandonedVerifyRuns(this.o.db, ABANDONED_AFTER_SECONDS);
    const run = await createVerifyRun(this.o.db, collection.name, startedBy);
    const controller = new AbortController();
    const done = this.run(run.id, collection, controller.signal).finally(() => {
      this.inFlight.delete(run.id);
      this.o.onVerifyRunEnd?.(run.id);
    });
    this.inFlight.set(run.id, { controller, done });
    return run;
  }

  private async run(id: string, collection: Collection<any>, signal: AbortSignal): Promise<void> {
    const { db } = this.o;
    let progress = Promise.resolve();
    try {
      const report = await verifyCollection(db, this.o.sink, collection, {
        sampleSize: RESULT_SAMPLE,
        signal,
        onProgress: (p) => {
          // Progress writes are chained so they land in order, and never block the comparison.
          progress = progress.then(() =>
            updateVerifyRunProgress(db, id, { bucketsTotal: p.total, bucketsDone: p.done, bucketsDiffering: p.bucketsDiffering, driftedTotal: p.drifted }).catch(() => undefined),
          );
        },
      });
      await progress;
      await finishVerifyRun(db, id, {
        bucketsCompared: report.bucketsCompared,
        bucketsDiffering: report.bucketsDiffering,
        drifted: report.drifted,
        driftedTotal: report.driftedTotal,
        enqueued: report.enqueued,
        samples: report.samples,
      });
    } catch (err) {
      await progress;
      const message = signal.aborted ? "stopped: the server shut down" : err instanceof Error ? err.message : String(err);
      this.o.logger?.error({ runId: id, err: message }, "verify run failed");
      await failVerifyRun(db, id, message).catch(() => undefined);
    }
  }

  /** Aborts runs in flight and waits for them to record their end. */
  async close(): Promise<void> {
    for (const r of this.inFlight.values()) r.controller.abort();
    await Promise.all([...this.inFlight.values()].map((r) => r.done));
  }
}
