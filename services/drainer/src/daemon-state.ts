import type { DrainResult, MaintenanceResult } from "@tether/core";

/** What /healthz reports: the drain loop's recent history, kept in memory. */
export interface DaemonState {
  startedAt: string;
  passes: number;
  failedPasses: number;
  /** Failed passes in a row (0 after any pass that did not fail). */
  consecutiveFailures: number;
  lastPass: (DrainResult & { at: string }) | undefined;
  lastMaintenance: { at: string; leader: boolean; sampled: boolean; prunedStats: number; prunedSamples: number; error?: string } | undefined;
}

export function newDaemonState(): DaemonState {
  return { startedAt: new Date().toISOString(), passes: 0, failedPasses: 0, consecutiveFailures: 0, lastPass: undefined, lastMaintenance: undefined };
}

export function recordPass(state: DaemonState, r: DrainResult): void {
  state.passes += 1;
  if (r.error) {
    state.failedPasses += 1;
    state.consecutiveFailures += 1;
  } else {
    state.consecutiveFailures = 0;
  }
  state.lastPass = { ...r, durationMs: Math.round(r.durationMs * 10) / 10, at: new Date().toISOString() };
}

export function recordMaintenance(state: DaemonState, r: MaintenanceResult | Error): void {
  const at = new Date().toISOString();
  state.lastMaintenance =
    r instanceof Error
      ? { at, leader: false, sampled: false, prunedStats: 0, prunedSamples: 0, error: r.message }
      : { at, leader: r.leader, sampled: r.sample !== undefined, prunedStats: r.prunedStats, prunedSamples: r.prunedSamples };
}
