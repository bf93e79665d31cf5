import type { DrainChildResult } from "./drain-child-process.js";

/** The drain stages in pipeline order, and which side does the work of each. */
const STAGES: readonly { stage: string; label: string; side: "pg" | "engine" | "node" }[] = [
  { stage: "claim", label: "claim", side: "pg" },
  { stage: "load", label: "load rows", side: "pg" },
  { stage: "verify", label: "_mget verify", side: "engine" },
  { stage: "build", label: "build documents", side: "node" },
  { stage: "bulk", label: "_bulk", side: "engine" },
  { stage: "readback", label: "read-back", side: "engine" },
  { stage: "delete", label: "delete", side: "pg" },
  { stage: "ledger", label: "ledger rest", side: "pg" },
  { stage: "commit", label: "commit", side: "pg" },
];

export interface StageBreakdown {
  /** Share of the summed stage time, per stage, in percent. */
  shares: Record<string, number>;
  /** Summed stage wall time (ms), over every repetition. */
  stageMs: number;
  wallMs: number;
  /** Node CPU (user + system) of the drainer child, in ms. */
  cpuMs: number;
  bySide: Record<"pg" | "engine" | "node", number>;
}

export function stageBreakdown(drains: readonly DrainChildResult[]): StageBreakdown {
  const ms: Record<string, number> = {};
  for (const d of drains) for (const [k, v] of Object.entries(d.stages)) ms[k] = (ms[k] ?? 0) + v.ms;
  const stageMs = Object.values(ms).reduce((a, b) => a + b, 0) || 1;
  const bySide = { pg: 0, engine: 0, node: 0 };
  const shares: Record<string, number> = {};
  for (const s of STAGES) {
    shares[s.stage] = (100 * (ms[s.stage] ?? 0)) / stageMs;
    bySide[s.side] += ms[s.stage] ?? 0;
  }
  const wallMs = drains.reduce((a, d) => a + d.durationMs, 0);
  const cpuMs = drains.reduce((a, d) => a + d.cpuMs.user + d.cpuMs.system, 0);
  return { shares, stageMs, wallMs, cpuMs, bySide };
}

/** One line for a report's notes: every stage's share, Postgres vs engine vs node, CPU busy. */
export function formatStageBreakdown(drains: readonly DrainChildResult[]): string {
  const b = stageBreakdown(drains);
  const pct = (x: number) => `${Math.round(x)}%`;
  const stages = STAGES.map((s) => `${s.label} ${pct(b.shares[s.stage] ?? 0)}`).join(", ");
  const sides = `Postgres ${pct((100 * b.bySide.pg) / b.stageMs)}, engine ${pct((100 * b.bySide.engine) / b.stageMs)}, node building ${pct((100 * b.bySide.node) / b.stageMs)}`;
  return (
    `per-stage share of summed stage time: ${stages}; by side: ${sides}; ` +
    `summed stage time = ${pct((100 * b.stageMs) / b.wallMs)} of wall (passes in flight overlap); ` +
    `drainer node CPU = ${pct((100 * b.cpuMs) / b.wallMs)} of wall (a core busy = 100%)`
  );
}
