import type { Kysely } from "kysely";
import { VerifyScheduler, type Collection, type Logger, type ScheduledVerifyResult, type Sink, type VerifyScheduleOptions } from "@tether/core/internal";

export interface VerifyScheduleLoop {
  options: VerifyScheduler["options"];
  /** Starts the due runs in the background unless some are running in this process already. */
  runIfDue(): void;
  /** Stops the run in hand between two windows (it is resumed from its checkpoint later) and waits for it. */
  stop(): Promise<void>;
}

/**
 * The daemon's side of scheduled verify: the maintenance leader calls `runIfDue` after each of
 * its passes; the runs go on beside the drain loop (never inside the maintenance transaction),
 * one at a time in this process.
 */
export function startVerifySchedule(o: {
  db: Kysely<any>;
  sink: Sink;
  collections: readonly Collection<any>[];
  options: VerifyScheduleOptions;
  logger: Logger;
  onRun: (r: ScheduledVerifyResult) => void;
}): VerifyScheduleLoop {
  const scheduler = new VerifyScheduler(o.db, o.sink, o.collections, o.options, o.logger);
  const controller = new AbortController();
  let running: Promise<void> | undefined;
  return {
    options: scheduler.options,
    runIfDue() {
      if (running || controller.signal.aborted) return;
      running = scheduler
        .runDue(controller.signal, o.onRun)
        .then(
          () => undefined,
          (err: unknown) => {
            if (!controller.signal.aborted) o.logger.warn({ err: err instanceof Error ? err.message : String(err) }, "scheduled verify failed; retrying after the next maintenance pass");
          },
        )
        .finally(() => {
          running = undefined;
        });
    },
    async stop() {
      controller.abort();
      await running;
    },
  };
}
