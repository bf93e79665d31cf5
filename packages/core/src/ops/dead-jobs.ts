import type { Kysely } from "kysely";
import { ValidationError } from "../errors.js";
import { notifyWake } from "../wake/wake-store.js";
import { requeueDeadJobs, selectDeadJobs, type DeadReason } from "../store/dead-job-store.js";

/** What operators do with the dead-letter table: list it, move rows back into the queue. */

export type { DeadReason };

/** A row of tether.dead_job. */
export interface DeadJob {
  /** Id of the dead-letter row (what `retryDeadJobs({ ids })` takes). */
  id: string;
  /** Id the job had in tether.job. */
  jobId: string;
  name: string;
  tag: string;
  priority: number;
  kwargs: unknown;
  attempts: number;
  lastError: string | null;
  reason: DeadReason;
  enqueuedAt: string;
  deadAt: string;
}

export interface DeadJobFilter {
  /** Only this reason. Default: both. */
  reason?: DeadReason;
  /** Only this job name (lane). */
  name?: string;
}

export interface ListDeadJobsOptions extends DeadJobFilter {
  /** Rows returned, newest first. Default 100, at most 10000. */
  limit?: number;
}

export interface RetryDeadJobsOptions extends DeadJobFilter {
  /** Dead-letter row ids. Exactly one of `ids` and `all` is required. */
  ids?: readonly string[];
  /** Every row matching the filter. */
  all?: boolean;
}

function checkFilter(f: DeadJobFilter): void {
  if (f.reason !== undefined && f.reason !== "parked" && f.reason !== "expired") throw new ValidationError("reason", `must be "parked" or "expired", got ${JSON.stringify(f.reason)}`);
  if (f.name !== undefined && (typeof f.name !== "string" || f.name.length === 0 || f.name.length > 200)) throw new ValidationError("name", "must be a non-empty job name");
}

/**
 * The newest dead-letter rows and how many match in total.
 *
 * @example
 * const { total, jobs } = await listDeadJobs(db, { reason: "parked", limit: 20 });
 */
export async function listDeadJobs(db: Kysely<any>, opts: ListDeadJobsOptions = {}): Promise<{ total: number; jobs: DeadJob[] }> {
  checkFilter(opts);
  const limit = opts.limit ?? 100;
  if (!Number.isInteger(limit) || limit < 1 || limit > 10_000) throw new ValidationError("limit", "must be an integer in 1..10000");
  const { total, rows } = await selectDeadJobs(db, { reason: opts.reason, name: opts.name }, limit);
  return {
    total,
    jobs: rows.map((r) => ({
      id: String(r.id),
      jobId: String(r.job_id),
      name: r.name,
      tag: r.tag,
      priority: r.priority,
      kwargs: r.kwargs,
      attempts: r.attempts,
      lastError: r.last_error,
      reason: r.reason,
      enqueuedAt: new Date(r.enqueued_at).toISOString(),
      deadAt: new Date(r.dead_at).toISOString(),
    })),
  };
}

/**
 * Moves dead-letter rows back into tether.job in one statement: due now, a fresh expiry (the
 * column default), attempts reset. The last error is kept so `status` still shows why it died.
 *
 * @example
 * await retryDeadJobs(db, { all: true, reason: "parked", name: "sync_annotation" });
 * await retryDeadJobs(db, { ids: ["12", "13"] });
 */
export async function retryDeadJobs(db: Kysely<any>, opts: RetryDeadJobsOptions): Promise<{ retried: number }> {
  checkFilter(opts);
  if ((opts.ids === undefined) === (opts.all !== true)) throw new ValidationError("ids", "give either ids or all (not both)");
  if (opts.ids !== undefined) {
    if (!Array.isArray(opts.ids) || opts.ids.length === 0) throw new ValidationError("ids", "must be a non-empty list");
    for (const id of opts.ids) if (typeof id !== "string" || !/^[1-9][0-9]{0,18}$/.test(id)) throw new ValidationError("ids", `invalid dead-job id ${JSON.stringify(id)}`);
  }
  const retried = await requeueDeadJobs(db, { reason: opts.reason, name: opts.name, ids: opts.ids });
  // Requeued jobs are due now: wake the drainers.
  if (retried > 0) await notifyWake(db);
  return { retried };
}
