import type { BatchContext } from "./batch-context.js";
import { syncCollection } from "./collection-pass.js";
import { Ledger } from "./ledger.js";
import { publishStage, timeStage } from "./drain-stages.js";
import type { Collection } from "../collection.js";
import type { CompletionCount } from "../store/job-stat-store.js";
import { canonicalEntityId } from "../entity-id.js";
import { parkJobs, rescheduleJobs } from "../store/job-store.js";
import { confirmJobs } from "../store/confirm-store.js";
import type { CompletionOutcome, JobRow, SyncJobArgs } from "../job.js";

/** Counts of one drain pass, by what happened to each claimed job. */
export interface DrainCounts {
  claimed: number;
  up_to_date: number;
  repaired: number;
  deleted_downstream: number;
  forced: number;
  parked: number;
  /** Kept for a later pass (write not yet confirmed, or a retryable failure). */
  retried: number;
  /**
   * Kept for the next pass, due at once with no attempt counted: the row was raised past the
   * downstream's document (ahead of it, or at its version with a change still to expand), and
   * the next pass writes it at the committed version.
   */
  raised: number;
  expired: number;
}

export function emptyCounts(): DrainCounts {
  return { claimed: 0, up_to_date: 0, repaired: 0, deleted_downstream: 0, forced: 0, parked: 0, retried: 0, raised: 0, expired: 0 };
}

/** Parses kwargs of a sync job; throws a message naming what is wrong. */
export function parseSyncArgs(kwargs: unknown): SyncJobArgs {
  if (typeof kwargs !== "object" || kwargs === null || Array.isArray(kwargs)) throw new Error("kwargs must be an object");
  const k = kwargs as Record<string, unknown>;
  const id = typeof k.id === "number" && Number.isSafeInteger(k.id) ? String(k.id) : k.id;
  // Its content is the id rule's to judge (canonicalEntityId), with a message naming the id.
  if (typeof id !== "string") throw new Error("kwargs.id must be a string");
  if (k.force !== undefined && typeof k.force !== "boolean") throw new Error("kwargs.force must be a boolean");
  if (k.version !== undefined && !Number.isSafeInteger(Number(k.version))) throw new Error("kwargs.version must be an integer");
  return { id, ...(k.force ? { force: true } : {}), ...(k.version !== undefined ? { version: Number(k.version) } : {}) };
}

/**
 * Verifies and repairs a claimed batch inside the drain transaction, then records the ledger:
 * confirmed jobs deleted, failed ones rescheduled or parked, completions counted.
 */
export async function processBatch(ctx: BatchContext, jobs: readonly JobRow[]): Promise<DrainCounts> {
  const counts = emptyCounts();
  counts.claimed = jobs.length;
  const ledger = new Ledger(ctx);
  const byCollection = new Map<Collection<any>, { job: JobRow; args: SyncJobArgs }[]>();
  for (const job of jobs) {
    const collection = ctx.collections.get(job.name);
    if (!collection) {
      ledger.park(job, `unknown job name "${job.name}": no collection handles it`);
      continue;
    }
    let args: SyncJobArgs;
    try {
      args = parseSyncArgs(job.kwargs);
      const canonical = canonicalEntityId(ctx.idTypes.get(collection), args.id);
      if ("error" in canonical) throw new Error(`kwargs.id: ${canonical.error}`);
      args.id = canonical.id;
    } catch (err) {
      ledger.park(job, `malformed kwargs: ${(err as Error).message}`);
      continue;
    }
    const list = byCollection.get(collection) ?? [];
    list.push({ job, args });
    byCollection.set(collection, list);
  }
  for (const [collection, list] of byCollection) await syncCollection(ctx, collection, list, ledger);

  // Completion counts per lane and outcome. A batch is mostly one lane and one outcome: a job
  // like the one before it adds to the same count without building its key.
  const stats = new Map<string, CompletionCount>();
  let last: CompletionCount | undefined;
  const count = (job: JobRow, outcome: CompletionOutcome) => {
    if (last?.outcome === outcome && last.name === job.name && last.tag === job.tag && last.priority === job.priority) {
      last.count += 1;
      return;
    }
    const key = `${job.name}\u0000${job.tag}\u0000${job.priority}\u0000${outcome}`;
    last = stats.get(key) ?? { name: job.name, tag: job.tag, priority: job.priority, outcome, count: 0 };
    last.count += 1;
    stats.set(key, last);
  };
  const tids: string[] = [];
  for (const job of jobs) {
    const outcome = ledger.confirmed.get(job.id);
    if (outcome === undefined) continue;
    counts[outcome as keyof DrainCounts] += 1;
    count(job, outcome);
    tids.push(job.tid);
  }
  if (ledger.parked.length > 0) {
    const parked = new Set(ledger.parked.map((p) => p.id));
    for (const job of jobs) if (parked.has(job.id)) count(job, "parked");
  }
  counts.parked = ledger.parked.length;
  counts.raised = ledger.retried.filter((r) => r.attempt === false).length;
  counts.retried = ledger.retried.length - counts.raised;

  // Confirmed jobs go, with the pass's completion counts and trace row, in one statement.
  // Parked jobs are logged by the dead-letter table's trigger.
  await timeStage("delete", ledger.confirmed.size, () => confirmJobs(ctx.trx, { confirmed: ledger.confirmed, tids, stats: [...stats.values()], events: ctx.entityEvents !== false }));
  const ledgerStarted = performance.now();
  await rescheduleJobs(ctx.trx, ledger.retried);
  await parkJobs(ctx.trx, ledger.parked);
  publishStage("ledger", ledgerStarted, jobs.length);
  ctx.completions?.push(...stats.values());
  if (ledger.parked.length > 0) ctx.logger.warn({ parked: ledger.parked.slice(0, 10) }, "parked jobs");
  return counts;
}
