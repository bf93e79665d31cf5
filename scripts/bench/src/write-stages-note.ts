import type { WriteStageSums } from "./child/write-stage-collector.js";

/** Stages of a write in pipeline order (the `tether:write-stage` channel, plus the HTTP request). */
const STAGES: readonly { stage: string; label: string }[] = [
  { stage: "transaction", label: "Postgres transaction (pool wait included)" },
  { stage: "build", label: "build documents" },
  { stage: "queue", label: "waiting for its batch" },
  { stage: "bulk", label: "_bulk round trip (serialising included)" },
  { stage: "sync", label: "whole direct sync" },
  { stage: "expedite", label: "expedite after a failed sync" },
  { stage: "request", label: "whole request" },
];

/**
 * One line for a report's notes: each stage's mean time per call, the `_bulk` requests' size,
 * and the API process's CPU per write — summed over the runs of one configuration.
 */
export function formatWriteStages(label: string, runs: readonly WriteStageSums[]): string {
  const sum: WriteStageSums["stages"] = {};
  for (const r of runs) {
    for (const [k, v] of Object.entries(r.stages)) {
      const s = (sum[k] ??= { ms: 0, items: 0, calls: 0 });
      s.ms += v.ms;
      s.items += v.items;
      s.calls += v.calls;
    }
  }
  const parts = STAGES.flatMap(({ stage, label: l }) => {
    const s = sum[stage];
    if (!s || s.calls === 0) return [];
    const size = stage === "bulk" ? `, ${(s.items / s.calls).toFixed(1)} operations a request` : stage === "expedite" ? ` (${s.calls} writes)` : "";
    return [`${l} ${(s.ms / s.calls).toFixed(1)} ms${size}`];
  });
  const cpuMs = runs.reduce((a, r) => a + r.cpuMs.user + r.cpuMs.system, 0);
  const wallMs = runs.reduce((a, r) => a + r.wallMs, 0);
  const writes = sum.request?.calls ?? 0;
  const cpu = writes > 0 ? `; API CPU ${((1000 * cpuMs) / writes).toFixed(0)} µs a write, ${((100 * cpuMs) / Math.max(1, wallMs)).toFixed(0)}% of a core` : "";
  return `${label}, mean per call: ${parts.join(", ")}${cpu}`;
}
