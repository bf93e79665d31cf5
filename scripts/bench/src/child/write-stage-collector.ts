/**
 * Preloaded (`--import`) into the API process by the load benchmark: sums the writer's stage
 * timings (the `tether:write-stage` channel) and each HTTP request's time from its start to the
 * end of its response (node's `http.server.*` channels), and writes them, with the process's
 * CPU time, as JSON to TETHER_BENCH_STAGES_FILE when the process exits.
 */
import { subscribe } from "node:diagnostics_channel";
import { writeFileSync } from "node:fs";

export interface WriteStageSums {
  /** Summed wall time, items and calls per stage (`request`: the HTTP layer's whole request). */
  stages: Record<string, { ms: number; items: number; calls: number }>;
  wallMs: number;
  cpuMs: { user: number; system: number };
}

const file = process.env.TETHER_BENCH_STAGES_FILE;
if (file) {
  const stages: WriteStageSums["stages"] = {};
  const add = (stage: string, ms: number, items: number) => {
    const s = (stages[stage] ??= { ms: 0, items: 0, calls: 0 });
    s.ms += ms;
    s.items += items;
    s.calls += 1;
  };
  subscribe("tether:write-stage", (m) => {
    const { stage, ms, items } = m as { stage: string; ms: number; items: number };
    add(stage, ms, items);
  });
  // The window: from the first POST to the end of the last response (start-up and health checks left out).
  let first: { t: number; cpu: NodeJS.CpuUsage } | undefined;
  let last: { t: number; cpu: NodeJS.CpuUsage } | undefined;
  const started = new WeakMap<object, number>();
  subscribe("http.server.request.start", (m) => {
    const { request } = m as { request: { method?: string } };
    if (request.method !== "POST") return;
    const t = performance.now();
    first ??= { t, cpu: process.cpuUsage() };
    started.set(request, t);
  });
  subscribe("http.server.response.finish", (m) => {
    const t = started.get((m as { request: object }).request);
    if (t === undefined) return;
    last = { t: performance.now(), cpu: process.cpuUsage() };
    add("request", last.t - t, 1);
  });
  process.on("exit", () => {
    const ms = (f: "user" | "system") => (first && last ? (last.cpu[f] - first.cpu[f]) / 1000 : 0);
    const sums: WriteStageSums = { stages, wallMs: first && last ? last.t - first.t : 0, cpuMs: { user: ms("user"), system: ms("system") } };
    writeFileSync(file, JSON.stringify(sums));
  });
}
