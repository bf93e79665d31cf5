import { fileURLToPath } from "node:url";
import { runJsonChild } from "./json-child.js";
import type { DrainResult } from "@tether/core";
import type { BenchSinkKind } from "./bench-engine.js";

export interface DrainChildConfig {
  databaseUrl: string;
  sinkKind: BenchSinkKind;
  /** The URL of the engine `sinkKind` names. */
  elasticsearchUrl: string;
  indexPrefix: string;
  batchSize?: number;
  /** Drain passes writing at a time, plus one batch ahead (the daemon's default is 2). */
  concurrency?: number;
  /** "drain": drainUntilEmpty; "idle": connect only (the memory baseline). */
  mode: "drain" | "idle";
  /** "plain" (default): plainAnnotations; "authors": the annotation collection with its author embed (fan-outs expanded). */
  collection?: "plain" | "authors";
  /** Drain into an EchoSink (no engine: each written document reads back once) instead of `sinkKind`'s engine. */
  echo?: boolean;
}

export interface DrainChildResult {
  durationMs: number;
  passes: number;
  /** Documents the passes' fan-out expansions bumped and enqueued. */
  expanded: number;
  counts: DrainResult | undefined;
  /** Wall time inside the sink's calls: `_mget` (verify + read-back) and `_bulk`. */
  sinkMs: { fetchStates: number; write: number };
  /** VmHWM after loading and connecting, before draining (kB). */
  idleHwmKb: number;
  /** VmHWM at exit: the process's peak resident set (kB). */
  peakHwmKb: number;
  rssKb: number;
  /** process.resourceUsage().maxRSS at exit (kB). */
  maxRssKb: number;
  /** Node CPU time of the child while draining. */
  cpuMs: { user: number; system: number };
  /** Summed wall time per drain stage (passes in flight overlap, so the sum can pass the wall time). */
  stages: Record<string, { ms: number; items: number; calls: number }>;
}

const script = fileURLToPath(new URL("./child/drain-child.ts", import.meta.url));

/** Runs the drainer in a child node process (same loader flags as this one). */
export function runDrainChild(cfg: DrainChildConfig): Promise<DrainChildResult> {
  return runJsonChild<DrainChildResult>(script, cfg, "drain child");
}
