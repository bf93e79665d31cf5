import type { Kysely } from "kysely";
import type { Collection } from "../collection.js";
import type { AnyEmbeddedTable } from "../embedded-table.js";
import type { FanoutJobArgs } from "../job.js";
import type { Logger } from "../logger.js";
import { backoffDelay, type BackoffOptions } from "./backoff.js";
import { advanceFanout, claimFanouts, countReached, expandChunk, finishFanout, inSavepoint, supersededFanout, type FanoutJobRow } from "../store/embed-store.js";
import { parkJobs, postponeJobs, rescheduleJobs, type Park, type Reschedule } from "../store/job-store.js";
import { PgErrorCode, pgErrorCode } from "../pg-error-codes.js";
import { recordCompletions, type CompletionCount } from "../store/job-stat-store.js";
import { notifyWake } from "../wake/wake-store.js";

/**
 * The drainer's expansion of fan-out jobs (see ../fan-out-rule.ts): in ONE short transaction of
 * its own, apart from the sync pass, it claims due fan-out jobs (FOR UPDATE SKIP LOCKED: two
 * drainers never expand one fan-out at once) and expands each by the next chunk of the documents
 * it reaches, in id order: each document bumped and given its sync job, the progress saved in
 * the fan-out job itself. A SIGKILL rolls the chunk back and the next claim starts it again
 * from the saved progress. At most `chunkSize` documents per transaction, however many fan-out
 * jobs it claimed: the transaction, and the row locks of the documents it bumps, stay short.
 * It never waits for a row an application transaction holds (a document, a change being
 * recorded): the fan-out stops before it and is due again shortly, so the application's
 * transaction is the one that goes on, never one that fails with a deadlock.
 */

/** How long a fan-out stopped by a row an application transaction holds waits before its next try. */
const HELD_ROW_DELAY_MS = 200;

export interface FanoutPassOptions {
  db: Kysely<any>;
  /** The collections with fan-out embeds. */
  collections: readonly Collection<any>[];
  /** Documents bumped per transaction. */
  chunkSize: number;
  /** Fan-out jobs claimed per transaction. */
  claimLimit: number;
  deadlineMs: number;
  maxAttempts: number;
  backoff: BackoffOptions;
  logger: Logger;
}

/** What one expansion transaction did (a drain pass reports it as `DrainResult.fanout`). */
export interface FanoutCounts {
  /** Fan-out jobs claimed. */
  claimed: number;
  /** Documents bumped (each got a sync job). */
  expanded: number;
  /** Fan-out jobs finished (their change expanded, or superseded by a newer one). */
  finished: number;
  /** Fan-out jobs retried after a failure, or parked. */
  retried: number;
  parked: number;
  /** Fan-out work is left that is due now: run again at once. */
  more: boolean;
}

export interface FanoutPassResult extends FanoutCounts {
  /** Completion counts of the finished and parked jobs, once committed. */
  completions: CompletionCount[];
}

export function emptyFanoutResult(): FanoutPassResult {
  return { claimed: 0, expanded: 0, finished: 0, retried: 0, parked: 0, more: false, completions: [] };
}

/** Parses a fan-out job's kwargs; throws a message naming what is wrong. */
export function parseFanoutArgs(kwargs: unknown): FanoutJobArgs {
  if (typeof kwargs !== "object" || kwargs === null || Array.isArray(kwargs)) throw new Error("kwargs must be an object");
  const k = kwargs as Record<string, unknown>;
  if (typeof k.embed !== "string" || k.embed === "") throw new Error("kwargs.embed must name an embed");
  if (typeof k.link !== "string") throw new Error("kwargs.link must be a string");
  const version = Number(k.version);
  if (!Number.isSafeInteger(version)) throw new Error("kwargs.version must be an integer");
  if (k.after !== undefined && typeof k.after !== "string") throw new Error("kwargs.after must be a string");
  return {
    embed: k.embed,
    link: k.link,
    version,
    ...(k.after !== undefined ? { after: k.after as string } : {}),
    ...(k.done !== undefined ? { done: Number(k.done) } : {}),
    ...(k.total !== undefined ? { total: Number(k.total) } : {}),
  };
}

/** One expansion transaction. Never throws: a failed transaction is logged and its jobs stay due. */
export async function expandFanouts(o: FanoutPassOptions): Promise<FanoutPassResult> {
  const byName = new Map(o.collections.flatMap((c) => (c.fanoutJobName ? [[c.fanoutJobName, c] as const] : [])));
  if (byName.size === 0) return emptyFanoutResult();
  try {
    return await o.db.transaction().execute(async (trx) => {
      const result = emptyFanoutResult();
      const jobs = await claimFanouts(trx, [...byName.keys()], { limit: o.claimLimit, deadlineMs: o.deadlineMs });
      result.claimed = jobs.length;
      const retries: Reschedule[] = [];
      const parks: Park[] = [];
      const stats = new Map<string, CompletionCount>();
      const count = (job: FanoutJobRow, outcome: "expanded" | "parked") => {
        const key = `${job.name}\u0000${job.tag}\u0000${job.priority}\u0000${outcome}`;
        const s = stats.get(key) ?? { name: job.name, tag: job.tag, priority: job.priority, outcome, count: 0 };
        s.count += 1;
        stats.set(key, s);
      };
      const woken = new Set<string>();
      // Fan-outs stopped by a row an application transaction holds: due again shortly, no attempt counted.
      const held: string[] = [];
      let budget = o.chunkSize;
      for (const job of jobs) {
        if (budget <= 0) {
          result.more = true; // left as it was: due, unlocked at COMMIT
          continue;
        }
        const collection = byName.get(job.name)!;
        let args: FanoutJobArgs;
        let embed: AnyEmbeddedTable | undefined;
        try {
          args = parseFanoutArgs(job.kwargs);
          embed = collection.embeds[args.embed];
          if (!embed || embed.direct) throw new Error(`kwargs.embed: collection "${collection.name}" has no fan-out embed "${args.embed}"`);
        } catch (err) {
          parks.push({ id: job.id, error: `malformed kwargs: ${(err as Error).message}` });
          count(job, "parked");
          continue;
        }
        const e = embed;
        try {
          const outcome = await inSavepoint(trx, async () => {
            if (await supersededFanout(trx, e, args.link, args.version)) {
              await finishFanout(trx, job.id, e, args.link, args.version);
              return { bumped: 0, finished: true, blocked: false };
            }
            const limit = Math.min(budget, o.chunkSize);
            const chunk = await expandChunk(trx, collection, e, { id: job.id, link: args.link, after: args.after, limit, tag: job.tag, priority: job.priority });
            if (chunk.complete) {
              await finishFanout(trx, job.id, e, args.link, args.version);
              return { bumped: chunk.bumped, finished: true, blocked: false };
            }
            if (chunk.bumped > 0) {
              const done = (args.done ?? 0) + chunk.bumped;
              // Counted once, when it is known to take more than one chunk: the progress shown is done / total.
              const total = args.total ?? (args.after === undefined ? await countReached(trx, collection, e, args.link) : done);
              await advanceFanout(trx, job.id, { after: chunk.last!, done, total: Math.max(total, done) });
            }
            return { bumped: chunk.bumped, finished: false, blocked: chunk.blocked };
          });
          budget -= Math.max(1, outcome.bumped);
          result.expanded += outcome.bumped;
          if (outcome.bumped > 0) woken.add(collection.jobName);
          if (outcome.finished) {
            result.finished += 1;
            count(job, "expanded");
          } else if (outcome.blocked) held.push(job.id);
          else result.more = true;
        } catch (err) {
          // A row an application transaction holds (see finishFanout): nothing failed, it waits its turn.
          if (pgErrorCode(err) === PgErrorCode.lockNotAvailable) {
            held.push(job.id);
            continue;
          }
          const error = `fan-out expansion failed: ${String(err)}`;
          if (job.attempts + 1 >= o.maxAttempts) {
            parks.push({ id: job.id, error });
            count(job, "parked");
          } else retries.push({ id: job.id, delayMs: backoffDelay(job.attempts, o.backoff), error });
        }
      }
      await rescheduleJobs(trx, retries);
      await postponeJobs(trx, held, HELD_ROW_DELAY_MS);
      await parkJobs(trx, parks);
      result.completions = [...stats.values()];
      await recordCompletions(trx, result.completions);
      for (const name of woken) await notifyWake(trx, name);
      result.retried = retries.length;
      result.parked = parks.length;
      if (parks.length > 0) o.logger.warn({ parked: parks.slice(0, 10) }, "parked fan-out jobs");
      return result;
    });
  } catch (err) {
    o.logger.error({ err: err instanceof Error ? err.message : String(err) }, "fan-out expansion failed; its jobs stay due");
    return emptyFanoutResult();
  }
}
