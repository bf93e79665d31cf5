/**
 * Terminology
 * - job: a row in tether.job saying "entity X of collection C may differ downstream".
 * - claim: taking due, unexpired jobs with FOR UPDATE SKIP LOCKED inside a drain transaction;
 *   the row locks are the lease, so a killed drainer's claims vanish with its connection.
 * - confirm: deleting a job after reading its entity back equal on both sides.
 * - park: moving a job that cannot succeed to tether.dead_job with its reason.
 * - expire: a job past expires_at; the sweep moves it to tether.dead_job (reason expired).
 * - lane: all jobs of one name; a lane can be paused.
 */
/**
 * A claimed job: what a drain pass needs of it (its enqueue time reaches the trace history from
 * the confirming DELETE itself, so the claim carries no timestamps).
 */
export interface JobRow {
  id: string;
  name: string;
  priority: number;
  tag: string;
  kwargs: unknown;
  attempts: number;
  /** Where the claim found the row (its ctid): the row lock keeps it there until the pass ends. */
  tid: string;
}

/** The kwargs of a sync job. */
export interface SyncJobArgs {
  id: string;
  /** Rewrite even when the downstream looks current (still verified before deleting). */
  force?: boolean;
  /** For hard deletes: the version the delete must carry downstream. */
  version?: number;
}

export interface NewJob {
  name: string;
  entityId: string;
  priority: number;
  tag: string;
  /** Delay before the job is due. */
  delayMs: number;
  force?: boolean;
  version?: number;
}

/** Outcome of a job that left the live table. */
export type CompletionOutcome = "up_to_date" | "repaired" | "deleted_downstream" | "forced" | "parked" | "expired";

/** Tags starting with this prefix are admin re-index work: they never page. */
export const REINDEX_TAG_PREFIX = "reindex";

export const DEFAULT_LIVE_TAG = "live";
