import type { Transaction } from "kysely";
import { backoffDelay, type BackoffOptions } from "./backoff.js";
import type { Collection } from "../collection.js";
import { canonicalEntityId } from "../entity-id.js";
import { bumpVersions, loadRows } from "../store/collection-store.js";
import { parkJobs, rescheduleJobs, deleteJobs, type Park, type Reschedule } from "../store/job-store.js";
import { recordCompletions, type CompletionCount } from "../store/job-stat-store.js";
import type { CompletionOutcome, JobRow, SyncJobArgs } from "../job.js";
import type { Logger } from "../logger.js";
import type { DownstreamState, Sink, SinkItemResult, SinkOperation } from "../sink.js";
import { isConfirmed, planEntity, rowVersion, type WriteOutcome } from "../verify/verification-matrix.js";

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
  expired: number;
}

export function emptyCounts(): DrainCounts {
  return { claimed: 0, up_to_date: 0, repaired: 0, deleted_downstream: 0, forced: 0, parked: 0, retried: 0, expired: 0 };
}

export interface BatchContext {
  trx: Transaction<any>;
  sink: Sink;
  collections: ReadonlyMap<string, Collection<any>>;
  /** SQL type of each collection's id column, to reject ids the column cannot compare against. */
  idTypes: ReadonlyMap<Collection<any>, string | undefined>;
  signal: AbortSignal;
  maxAttempts: number;
  backoff: BackoffOptions;
  sinkRetries: number;
  logger: Logger;
  /** Receives the per-lane completion counts recorded by the batch, to export after COMMIT. */
  completions?: CompletionCount[];
}

interface Ledger {
  confirm: Map<string, CompletionOutcome>;
  retry: Reschedule[];
  park: Park[];
}

/** Parses kwargs of a sync job; throws a message naming what is wrong. */
export function parseSyncArgs(kwargs: unknown): SyncJobArgs {
  if (typeof kwargs !== "object" || kwargs === null || Array.isArray(kwargs)) throw new Error("kwargs must be an object");
  const k = kwargs as Record<string, unknown>;
  const id = typeof k.id === "number" && Number.isSafeInteger(k.id) ? String(k.id) : k.id;
  if (typeof id !== "string" || id.length === 0 || id.length > 512) throw new Error("kwargs.id must be a non-empty string");
  if (k.force !== undefined && typeof k.force !== "boolean") throw new Error("kwargs.force must be a boolean");
  if (k.version !== undefined && !Number.isSafeInteger(Number(k.version))) throw new Error("kwargs.version must be an integer");
  return { id, ...(k.force ? { force: true } : {}), ...(k.version !== undefined ? { version: Number(k.version) } : {}) };
}


/** Processes one collection's jobs: load, compare, repair, read back. */
async function processCollection(ctx: BatchContext, collection: Collection<any>, jobs: { job: JobRow; args: SyncJobArgs }[], ledger: Ledger): Promise<void> {
  const byEntity = new Map<string, { job: JobRow; args: SyncJobArgs }[]>();
  for (const j of jobs) {
    const list = byEntity.get(j.args.id) ?? [];
    list.push(j);
    byEntity.set(j.args.id, list);
  }
  const ids = [...byEntity.keys()];
  const retryAll = (items: { job: JobRow }[], error: string) => {
    for (const { job } of items) ledger.retry.push({ id: job.id, delayMs: backoffDelay(job.attempts, ctx.backoff), error });
  };

  let rows: Map<string, any>;
  try {
    rows = await loadRows(ctx.trx, collection, ids);
  } catch (err) {
    throw new Error(`loading ${collection.table} rows failed: ${String(err)}`, { cause: err });
  }

  let states: Map<string, DownstreamState>;
  try {
    states = await ctx.sink.fetchStates(collection.index, ids, { signal: ctx.signal, retries: ctx.sinkRetries });
  } catch (err) {
    retryAll(jobs, `reading downstream failed: ${String(err)}`);
    return;
  }

  const writes: { id: string; op: SinkOperation; outcome: WriteOutcome; bumpVersionTo?: number }[] = [];
  for (const id of ids) {
    const entityJobs = byEntity.get(id)!;
    const force = entityJobs.some((j) => j.args.force);
    const deleteVersion = Math.max(0, ...entityJobs.map((j) => j.args.version ?? 0));
    let plan;
    try {
      plan = planEntity({ collection, id, row: rows.get(id), downstream: states.get(id), force, deleteVersion });
    } catch (err) {
      for (const { job } of entityJobs) parkOrRetry(ctx, ledger, job, `cannot build document: ${String(err)}`, true);
      continue;
    }
    if (plan.action === "confirm") {
      for (const { job } of entityJobs) ledger.confirm.set(job.id, "up_to_date");
    } else {
      writes.push({ id, op: plan.op, outcome: plan.outcome, ...(plan.bumpVersionTo !== undefined ? { bumpVersionTo: plan.bumpVersionTo } : {}) });
    }
  }
  if (writes.length === 0) return;

  // The downstream holds a version Postgres never had (edited behind our back): leapfrog the
  // row's version so the repair can overwrite it with external versioning. Only if the row is
  // still the one we read: a write that committed since (its direct sync is what made the
  // downstream look "ahead") must not be overwritten by our stale copy, nor a delete undone.
  const leaps = writes.filter((w) => w.bumpVersionTo !== undefined);
  const leapt = await bumpVersions(ctx.trx, collection, ctx.idTypes.get(collection), leaps.map((w) => ({ id: w.id, version: w.bumpVersionTo!, seen: rowVersion(collection, rows.get(w.id)) })));
  for (const w of leaps) {
    if (leapt.has(w.id)) continue;
    writes.splice(writes.indexOf(w), 1);
    retryAll(byEntity.get(w.id)!, "the row changed while its repair was planned; retrying");
  }
  if (writes.length === 0) return;

  let results: SinkItemResult[];
  try {
    results = await ctx.sink.write(collection.index, writes.map((w) => w.op), { signal: ctx.signal, retries: ctx.sinkRetries });
  } catch (err) {
    retryAll(writes.flatMap((w) => byEntity.get(w.id)!), `bulk write failed: ${String(err)}`);
    return;
  }

  const readBackIds: string[] = [];
  const conflictAt = new Map<string, number>();
  results.forEach((res, i) => {
    const w = writes[i]!;
    const entityJobs = byEntity.get(w.id)!;
    if (res.status === "conflict" && res.currentVersion !== undefined) conflictAt.set(w.id, res.currentVersion);
    if (res.status === "ok" || res.status === "conflict") readBackIds.push(w.id);
    else if (res.status === "retryable") retryAll(entityJobs, res.error);
    else for (const { job } of entityJobs) parkOrRetry(ctx, ledger, job, res.error, false);
  });
  if (readBackIds.length === 0) return;

  let after: Map<string, DownstreamState>;
  try {
    after = await ctx.sink.fetchStates(collection.index, readBackIds, { signal: ctx.signal, retries: ctx.sinkRetries });
  } catch (err) {
    retryAll(readBackIds.flatMap((id) => byEntity.get(id)!), `read-back failed: ${String(err)}`);
    return;
  }
  const writeById = new Map(writes.map((w) => [w.id, w]));
  const markerBumps: { id: string; version: number; seen: number }[] = [];
  for (const id of readBackIds) {
    const w = writeById.get(id)!;
    const entityJobs = byEntity.get(id)!;
    const row = rows.get(id);
    const expectedVersion = w.op.kind === "delete" ? undefined : w.op.version;
    if (isConfirmed(collection, row, after.get(id), expectedVersion)) {
      for (const { job } of entityJobs) ledger.confirm.set(job.id, w.outcome);
    } else {
      const seen = after.get(id);
      // Refused as older, yet nothing readable is there: a delete marker made behind our back
      // (kept for index.gc_deletes). Leapfrog it so the retry is not refused again.
      const marker = conflictAt.get(id);
      if (!seen && row !== undefined && marker !== undefined && w.op.kind !== "delete") markerBumps.push({ id, version: marker + 1, seen: rowVersion(collection, row) });
      retryAll(entityJobs, `not confirmed on read-back: wrote ${w.op.kind} v${w.op.version}, downstream has ${seen ? `${seen.deleted ? "tombstone" : "document"} v${seen.version}` : "nothing"}`);
    }
  }
  await bumpVersions(ctx.trx, collection, ctx.idTypes.get(collection), markerBumps);
}

function parkOrRetry(ctx: BatchContext, ledger: Ledger, job: JobRow, error: string, immediately: boolean): void {
  if (immediately || job.attempts + 1 >= ctx.maxAttempts) ledger.park.push({ id: job.id, error });
  else ledger.retry.push({ id: job.id, delayMs: backoffDelay(job.attempts, ctx.backoff), error });
}

/**
 * Verifies and repairs a claimed batch inside the drain transaction, then records the ledger:
 * confirmed jobs deleted, failed ones rescheduled or parked, completions counted.
 */
export async function processBatch(ctx: BatchContext, jobs: readonly JobRow[]): Promise<DrainCounts> {
  const counts = emptyCounts();
  counts.claimed = jobs.length;
  const ledger: Ledger = { confirm: new Map(), retry: [], park: [] };
  const byCollection = new Map<Collection<any>, { job: JobRow; args: SyncJobArgs }[]>();
  for (const job of jobs) {
    const collection = ctx.collections.get(job.name);
    if (!collection) {
      ledger.park.push({ id: job.id, error: `unknown job name "${job.name}": no collection handles it` });
      continue;
    }
    let args: SyncJobArgs;
    try {
      args = parseSyncArgs(job.kwargs);
      const canonical = canonicalEntityId(ctx.idTypes.get(collection), args.id);
      if ("error" in canonical) throw new Error(`kwargs.id: ${canonical.error}`);
      args = { ...args, id: canonical.id };
    } catch (err) {
      ledger.park.push({ id: job.id, error: `malformed kwargs: ${(err as Error).message}` });
      continue;
    }
    const list = byCollection.get(collection) ?? [];
    list.push({ job, args });
    byCollection.set(collection, list);
  }
  for (const [collection, list] of byCollection) await processCollection(ctx, collection, list, ledger);

  const jobById = new Map(jobs.map((j) => [j.id, j]));
  const stats = new Map<string, CompletionCount>();
  const count = (job: JobRow, outcome: CompletionOutcome) => {
    const key = `${job.name}\u0000${job.tag}\u0000${job.priority}\u0000${outcome}`;
    const s = stats.get(key) ?? { name: job.name, tag: job.tag, priority: job.priority, outcome, count: 0 };
    s.count += 1;
    stats.set(key, s);
  };
  for (const [id, outcome] of ledger.confirm) {
    counts[outcome as keyof DrainCounts] += 1;
    count(jobById.get(id)!, outcome);
  }
  for (const p of ledger.park) count(jobById.get(p.id)!, "parked");
  counts.parked = ledger.park.length;
  counts.retried = ledger.retry.length;

  await deleteJobs(ctx.trx, [...ledger.confirm.keys()]);
  await rescheduleJobs(ctx.trx, ledger.retry);
  await parkJobs(ctx.trx, ledger.park);
  await recordCompletions(ctx.trx, [...stats.values()]);
  ctx.completions?.push(...stats.values());
  if (ledger.park.length > 0) ctx.logger.warn({ parked: ledger.park.slice(0, 10) }, "parked jobs");
  return counts;
}
