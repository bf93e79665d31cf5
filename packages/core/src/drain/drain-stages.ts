import { channel } from "node:diagnostics_channel";

/**
 * Where a drain pass spends its time, stage by stage, published on a diagnostics channel
 * (`node:diagnostics_channel`) so a profiler (the benchmark's drainer) can subscribe by name
 * without the drainer knowing about it. Nothing is measured while nobody listens.
 */
export type DrainStage = "claim" | "load" | "build" | "verify" | "bulk" | "readback" | "delete" | "ledger" | "commit";

/** One stage of one pass (or of one collection's share of it). */
export interface DrainStageTiming {
  stage: DrainStage;
  ms: number;
  /** Items the stage handled: jobs, rows or documents. */
  items: number;
}

/** Name of the channel every stage timing is published on. */
export const DRAIN_STAGE_CHANNEL = "tether:drain-stage";

const stages = channel(DRAIN_STAGE_CHANNEL);

/** Whether anyone listens (callers skip their clock reads otherwise). */
export function profilingStages(): boolean {
  return stages.hasSubscribers;
}

export function publishStage(stage: DrainStage, startedAt: number, items: number): void {
  if (stages.hasSubscribers) stages.publish({ stage, ms: performance.now() - startedAt, items } satisfies DrainStageTiming);
}

/** Runs `fn` and publishes its wall time as `stage`. */
export async function timeStage<T>(stage: DrainStage, items: number, fn: () => Promise<T>): Promise<T> {
  if (!stages.hasSubscribers) return fn();
  const t = performance.now();
  try {
    return await fn();
  } finally {
    publishStage(stage, t, items);
  }
}

/** The synchronous form of `timeStage` (document building, the matrix). */
export function timeStageSync<T>(stage: DrainStage, items: number, fn: () => T): T {
  if (!stages.hasSubscribers) return fn();
  const t = performance.now();
  try {
    return fn();
  } finally {
    publishStage(stage, t, items);
  }
}
