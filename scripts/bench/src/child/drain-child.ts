/**
 * A drainer in its own process, so its peak memory (VmHWM) is the drainer's alone.
 * argv[2]: JSON DrainChildConfig. Prints one JSON DrainChildResult line on stdout.
 */
import { readFileSync } from "node:fs";
import { sql } from "kysely";
import { createDb, Drainer } from "@tether/core";
import { annotations } from "@tether/annotations";
import { benchSink } from "../bench-engine.js";
import type { DrainChildConfig, DrainChildResult } from "../drain-child-process.js";
import { timedSink } from "../timed-sink.js";

function memoryKb(field: "VmHWM" | "VmRSS"): number {
  const m = new RegExp(`^${field}:\\s+(\\d+) kB`, "m").exec(readFileSync("/proc/self/status", "utf8"));
  return m ? Number(m[1]) : Number.NaN;
}

const cfg = JSON.parse(process.argv[2] ?? "{}") as DrainChildConfig;
const db = createDb({ connectionString: cfg.databaseUrl, max: 4, applicationName: "tether-bench-drainer" });
const sink = benchSink(cfg.sinkKind, cfg.elasticsearchUrl, cfg.indexPrefix);
try {
  const timed = timedSink(sink);
  const drainer = new Drainer({ db, sink: timed.sink, collections: [annotations], batchSize: cfg.batchSize ?? 2500, concurrency: cfg.concurrency ?? 2 });
  await sql`SELECT 1`.execute(db);
  const idleKb = memoryKb("VmHWM");
  let passes = 0;
  const started = performance.now();
  const counts = cfg.mode === "drain" ? await drainer.drainUntilEmpty({ onPass: () => void passes++ }) : undefined;
  const durationMs = performance.now() - started;
  const result: DrainChildResult = { durationMs, passes, counts, sinkMs: timed.spentMs, idleHwmKb: idleKb, peakHwmKb: memoryKb("VmHWM"), rssKb: memoryKb("VmRSS") };
  process.stdout.write(JSON.stringify(result) + "\n");
} finally {
  await db.destroy();
  await sink.close();
}
