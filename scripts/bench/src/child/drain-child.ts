/**
 * A drainer in its own process, so its peak memory (VmHWM) is the drainer's alone.
 * argv[2]: JSON DrainChildConfig. Prints one JSON DrainChildResult line on stdout.
 */
import { subscribe } from "node:diagnostics_channel";
import { readFileSync } from "node:fs";
import { sql } from "kysely";
import { createDb, Drainer, type Sink } from "@tether/core";
import { annotations } from "@tether/annotations";
import { plainAnnotations } from "../plain-annotations.js";
import { benchSink } from "../bench-engine.js";
import { EchoSink } from "../echo-sink.js";
import type { DrainChildConfig, DrainChildResult } from "../drain-child-process.js";
import { timedSink } from "../timed-sink.js";

function memoryKb(field: "VmHWM" | "VmRSS"): number {
  const m = new RegExp(`^${field}:\\s+(\\d+) kB`, "m").exec(readFileSync("/proc/self/status", "utf8"));
  return m ? Number(m[1]) : Number.NaN;
}

const cfg = JSON.parse(process.argv[2] ?? "{}") as DrainChildConfig;
const db = createDb({ connectionString: cfg.databaseUrl, max: 4, applicationName: "tether-bench-drainer" });
const sink: Sink & { close?(): Promise<void> } = cfg.echo ? new EchoSink() : benchSink(cfg.sinkKind, cfg.elasticsearchUrl, cfg.indexPrefix);
try {
  const timed = timedSink(sink);
  const collection = cfg.collection === "authors" ? annotations : plainAnnotations;
  const drainer = new Drainer({ db, sink: timed.sink, collections: [collection], batchSize: cfg.batchSize ?? 2500, concurrency: cfg.concurrency ?? 2 });
  await sql`SELECT 1`.execute(db);
  const idleKb = memoryKb("VmHWM");
  let passes = 0;
  let expanded = 0;
  // The drainer publishes each stage's wall time on this channel (DRAIN_STAGE_CHANNEL in core).
  const stages: Record<string, { ms: number; items: number; calls: number }> = {};
  subscribe("tether:drain-stage", (m) => {
    const { stage, ms, items } = m as { stage: string; ms: number; items: number };
    const s = (stages[stage] ??= { ms: 0, items: 0, calls: 0 });
    s.ms += ms;
    s.items += items;
    s.calls += 1;
  });
  const cpuBefore = process.cpuUsage();
  const started = performance.now();
  const counts = cfg.mode === "drain" ? await drainer.drainUntilEmpty({ onPass: (r) => ((passes += 1), (expanded += r.fanout?.expanded ?? 0)) }) : undefined;
  const durationMs = performance.now() - started;
  const cpu = process.cpuUsage(cpuBefore);
  const result: DrainChildResult = { durationMs, passes, expanded, counts, sinkMs: timed.spentMs, idleHwmKb: idleKb, peakHwmKb: memoryKb("VmHWM"), rssKb: memoryKb("VmRSS"), maxRssKb: process.resourceUsage().maxRSS, cpuMs: { user: cpu.user / 1000, system: cpu.system / 1000 }, stages };
  process.stdout.write(JSON.stringify(result) + "\n");
} finally {
  await db.destroy();
  await sink.close?.();
}
