import { fileURLToPath } from "node:url";
import { runJsonChild } from "../json-child.js";
import type { BenchSinkKind } from "../bench-engine.js";
import type { ScaleIdType } from "./scale-items.js";

export interface DeepVerifyChildConfig {
  databaseUrl: string;
  sinkKind: BenchSinkKind;
  engineUrl: string;
  indexPrefix: string;
  idType: ScaleIdType;
}

export interface DeepVerifyChildResult {
  scanned: number;
  driftedTotal: number;
  durationMs: number;
  docsPerSecond: number;
  /** VmHWM at the end: the process's peak resident set (kB). */
  peakHwmKb: number;
  /** process.resourceUsage().maxRSS at the end (kB). */
  maxRssKb: number;
  /** Peaks of process.memoryUsage() sampled every 200 ms (MB). */
  peakMb: { heapUsed: number; external: number; arrayBuffers: number };
}

const script = fileURLToPath(new URL("../child/deep-verify-child.ts", import.meta.url));

/** Runs the deep verify of one verify-scale collection in a child node process (same loader flags as this one). */
export function runDeepVerifyChild(cfg: DeepVerifyChildConfig): Promise<DeepVerifyChildResult> {
  return runJsonChild<DeepVerifyChildResult>(script, cfg, "deep verify child");
}
