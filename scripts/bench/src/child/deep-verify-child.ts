/**
 * `tether verify --deep` of one verify-scale collection in its own process, so its peak memory
 * is the deep verify's alone. argv[2]: JSON DeepVerifyChildConfig. Prints one JSON
 * DeepVerifyChildResult line on stdout.
 */
import { readFileSync } from "node:fs";
import { createDb, deepVerifyCollection } from "@tether/core";
import { benchSink } from "../bench-engine.js";
import { SCALE_COLLECTIONS } from "../verify-scale/scale-items.js";
import type { DeepVerifyChildConfig, DeepVerifyChildResult } from "../verify-scale/deep-verify-child-process.js";

const hwmKb = () => Number(/^VmHWM:\s+(\d+) kB/m.exec(readFileSync("/proc/self/status", "utf8"))?.[1] ?? Number.NaN);

const cfg = JSON.parse(process.argv[2] ?? "{}") as DeepVerifyChildConfig;
const db = createDb({ connectionString: cfg.databaseUrl, max: 4, applicationName: "tether-bench-deep-verify" });
const sink = benchSink(cfg.sinkKind, cfg.engineUrl, cfg.indexPrefix);
// Where the peak is: the JS heap (live objects) or buffers outside it (request and response bodies).
const peak = { heapUsed: 0, external: 0, arrayBuffers: 0 };
const sample = () => {
  const m = process.memoryUsage();
  peak.heapUsed = Math.max(peak.heapUsed, m.heapUsed);
  peak.external = Math.max(peak.external, m.external);
  peak.arrayBuffers = Math.max(peak.arrayBuffers, m.arrayBuffers);
};
const sampler = setInterval(sample, 200);
try {
  const r = await deepVerifyCollection(db, sink, SCALE_COLLECTIONS[cfg.idType], { enqueue: false, keepOrphans: true });
  clearInterval(sampler);
  sample();
  const result: DeepVerifyChildResult = {
    scanned: r.scanned,
    driftedTotal: r.driftedTotal,
    durationMs: r.durationMs,
    docsPerSecond: r.docsPerSecond,
    peakHwmKb: hwmKb(),
    maxRssKb: process.resourceUsage().maxRSS,
    peakMb: { heapUsed: Math.round(peak.heapUsed / 2 ** 20), external: Math.round(peak.external / 2 ** 20), arrayBuffers: Math.round(peak.arrayBuffers / 2 ** 20) },
  };
  process.stdout.write(`${JSON.stringify(result)}\n`);
} finally {
  await sink.close();
  await db.destroy();
}
