import type { Kysely } from "kysely";
import { backoffDelay, commonLastErrors, emptyCounts, msUntilNextDue, pausedNames, queueStats, type DrainCounts, type Drainer, type DrainResult } from "@tether/core/internal";

/** Why `drain --until-empty` stopped. */
export type UntilEmptyStop =
  /** No live job of an unpaused lane is left (paused lanes and parked jobs may still hold work). */
  | "empty"
  /** `giveUpAfter` rounds in a row claimed work and confirmed, parked or expired none of it. */
  | "stuck"
  /** The overall timeout passed (or the next due job lies beyond it) with work left. */
  | "timeout";

export interface UntilEmptyOptions {
  drainer: Drainer;
  db: Kysely<any>;
  /** Overall bound. */
  timeoutMs: number;
  /** Rounds without progress (nothing confirmed, parked or expired) before giving up. */
  giveUpAfter: number;
  onPass?: (r: DrainResult) => void;
  /** Told before each wait for jobs that are not due yet (backoff, grace period). */
  onWait?: (ms: number, reason: string) => void;
}

export interface UntilEmptyRemaining {
  /** Live jobs of unpaused lanes still in the queue (retrying, or not yet due). */
  failing: number;
  /** Live jobs of paused lanes. */
  paused: number;
  pausedLanes: string[];
  /** Jobs this drain parked. */
  parkedNow: number;
  /** Every parked job in the dead-letter table. */
  parkedTotal: number;
}

export interface UntilEmptyResult extends DrainResult {
  passes: number;
  /** Drain rounds, separated by waits for jobs to become due. */
  rounds: number;
  stop: UntilEmptyStop;
  remaining: UntilEmptyRemaining;
  /** The last error of a pass that failed as a whole, else the commonest last_error of the jobs left. */
  lastError?: string;
}

const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));
const progressed = (r: DrainCounts) => r.up_to_date + r.repaired + r.deleted_downstream + r.forced + r.parked + r.expired > 0;

/**
 * Drains until no live job of an unpaused lane is left: rounds of back-to-back passes, and
 * between them a wait until the next job becomes due (a backoff, a grace period). Gives up when
 * `giveUpAfter` rounds in a row made no progress, or at the timeout; says what is left.
 */
export async function drainUntilEmpty(o: UntilEmptyOptions): Promise<UntilEmptyResult> {
  const started = performance.now();
  const deadline = Date.now() + o.timeoutMs;
  const total: DrainResult = { ...emptyCounts(), durationMs: 0 };
  let passes = 0;
  let rounds = 0;
  let stalled = 0;
  let lastError: string | undefined;
  let stop: UntilEmptyStop;
  for (;;) {
    rounds += 1;
    const r = await o.drainer.drainUntilEmpty({
      onPass: (p) => {
        passes += 1;
        o.onPass?.(p);
      },
    });
    for (const k of Object.keys(emptyCounts()) as (keyof DrainCounts)[]) total[k] += r[k];
    if (r.error) lastError = r.error;
    if (r.error || r.claimed > 0) stalled = progressed(r) ? 0 : stalled + 1;

    let wait: number | null;
    let failed = r.error !== undefined;
    try {
      wait = await msUntilNextDue(o.db, await pausedNames(o.db));
    } catch (err) {
      lastError = err instanceof Error ? err.message : String(err);
      if (!r.error) stalled += 1;
      failed = true;
      wait = 0;
    }
    if (wait === null) {
      stop = "empty";
      break;
    }
    if (stalled >= o.giveUpAfter) {
      stop = "stuck";
      break;
    }
    // A pass that failed as a whole leaves its jobs due: back off before trying again.
    if (failed) wait = Math.max(wait, backoffDelay(Math.max(0, stalled - 1)));
    if (Date.now() + wait >= deadline) {
      stop = "timeout";
      break;
    }
    if (wait > 0) {
      o.onWait?.(wait, failed ? `the last round failed: ${lastError}` : "jobs in backoff or grace period");
      await sleep(wait);
    }
  }
  total.durationMs = performance.now() - started;
  const stats = await queueStats(o.db);
  const pausedLanes = stats.paused.map((p) => p.name);
  if (lastError === undefined && stop !== "empty") lastError = (await commonLastErrors(o.db, pausedLanes, 1))[0]?.error;
  const live = (names: (n: string) => boolean) =>
    stats.byName.filter((g) => names(g.name)).reduce((a, g) => a + g.total - g.expired, 0);
  return {
    ...total,
    passes,
    rounds,
    stop,
    remaining: {
      failing: live((n) => !pausedLanes.includes(n)),
      paused: live((n) => pausedLanes.includes(n)),
      pausedLanes,
      parkedNow: total.parked,
      parkedTotal: stats.parked,
    },
    ...(lastError !== undefined ? { lastError } : {}),
  };
}
