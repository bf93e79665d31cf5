import type { ScheduledRunState } from "../store/verify-schedule-store.js";

/**
 * When a scheduled verify may run: the maintenance leader asks this, per collection and mode
 * (fast, then deep), after each of its passes. Pure: no I/O.
 *
 * | scheduled run in progress | its lease          | last completed run of the mode        | decision                                  |
 * | ------------------------- | ------------------ | ------------------------------------- | ----------------------------------------- |
 * | yes                       | held               | any                                   | wait: another process works on it         |
 * | yes                       | passed             | any                                   | resume it from its checkpoint             |
 * | no                        | —                  | none ever                             | start                                     |
 * | no                        | —                  | finished `intervalMs` ago or more     | start                                     |
 * | no                        | —                  | finished less than `intervalMs` ago   | wait                                      |
 * | no                        | —                  | before an unsettled restore, or `restore.intervalMs` ago or more | start (a restore: see below) |
 * | (the mode is off: `intervalMs` 0)         | any                | any                                   | wait                                      |
 *
 * Why these cells:
 * - A lease, not the maintenance lock, keeps a run to one process: the lock lasts one short
 *   transaction, a run minutes or hours. A process killed mid-run stops renewing its lease, and
 *   the next leader resumes the run where its last checkpoint says, instead of starting over.
 * - A run completed by anyone (the console, or `tether verify`, which records its whole-collection
 *   runs too) counts toward the interval: the interval is about how old the newest comparison may get.
 * - After a restore (a version floor check found the engine ahead of the sequence) not yet
 *   settled by a clean fast run, the fast run starts at once and every `restore.intervalMs`
 *   until one finishes clean: documents ahead of their restored rows, or the index's own
 *   losses, are found within minutes instead of at the next hourly run.
 * - A run resumed past its interval is still resumed, not restarted: its windows done are valid
 *   comparisons, and a fresh start would compare them again.
 */
export type ScheduleDecision = { action: "wait" } | { action: "start" } | { action: "resume"; runId: string };

export function scheduleDecision(state: ScheduledRunState | undefined, now: Date, intervalMs: number, restore?: { at: Date; intervalMs: number }): ScheduleDecision {
  if (intervalMs <= 0) return { action: "wait" };
  const running = state?.running;
  if (running) return running.leaseExpired ? { action: "resume", runId: running.id } : { action: "wait" };
  const last = state?.lastDoneAt;
  if (last === undefined || now.getTime() - last.getTime() >= intervalMs) return { action: "start" };
  if (restore && (last.getTime() < restore.at.getTime() || now.getTime() - last.getTime() >= restore.intervalMs)) return { action: "start" };
  return { action: "wait" };
}
