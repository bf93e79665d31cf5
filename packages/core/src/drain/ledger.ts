import { backoffDelay, type BackoffOptions } from "./backoff.js";
import type { CompletionOutcome, JobRow } from "../job.js";
import type { Park, Reschedule } from "../store/job-store.js";

/**
 * What a drain batch decided for each claimed job, recorded in the drain transaction once the
 * batch is done: confirmed jobs are deleted, the others rescheduled with backoff or parked.
 */
export class Ledger {
  readonly confirmed = new Map<string, CompletionOutcome>();
  readonly retried: Reschedule[] = [];
  readonly parked: Park[] = [];

  constructor(private readonly policy: { maxAttempts: number; backoff: BackoffOptions }) {}

  confirm(jobs: readonly JobRow[], outcome: CompletionOutcome): void {
    for (const job of jobs) this.confirmed.set(job.id, outcome);
  }

  /** Kept for a later pass, after its backoff; does not count towards parking. */
  retry(jobs: readonly JobRow[], error: string): void {
    for (const job of jobs) this.retried.push({ id: job.id, delayMs: backoffDelay(job.attempts, this.policy.backoff), error });
  }

  /** Due again at once, counting no attempt: nothing failed, the next pass has the rest of the work. */
  again(jobs: readonly JobRow[], reason: string): void {
    for (const job of jobs) this.retried.push({ id: job.id, delayMs: 0, error: reason, attempt: false });
  }

  park(job: JobRow, error: string): void {
    this.parked.push({ id: job.id, error });
  }

  /** A permanent failure: parked at once when `immediately`, else after `maxAttempts` of them. */
  fail(jobs: readonly JobRow[], error: string, immediately: boolean): void {
    for (const job of jobs) {
      if (immediately || job.attempts + 1 >= this.policy.maxAttempts) this.park(job, error);
      else this.retry([job], error);
    }
  }
}
