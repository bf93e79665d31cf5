import type { BenchSinkKind } from "./bench-engine.js";
import type { BenchScope } from "./bench-scope.js";
import type { ResultRow } from "./report.js";

export interface BenchmarkOutput {
  rows: ResultRow[];
  /** Extra facts for the JSON report (configurations, sizes, raw samples). */
  info?: Record<string, unknown>;
}

/** Thrown when a benchmark cannot run here (e.g. a component is not built yet). */
export class BenchmarkUnavailable extends Error {}

export interface Benchmark {
  /** Short name for `pnpm bench <name>`. */
  name: string;
  title: string;
  /** The sinks `--sink` may choose for it. Default: Elasticsearch only. */
  sinks?: readonly BenchSinkKind[];
  run(scope: BenchScope): Promise<BenchmarkOutput>;
}

/** Milliseconds taken by `fn`. */
export async function timed(fn: () => Promise<unknown>): Promise<number> {
  const t = performance.now();
  await fn();
  return performance.now() - t;
}

/** Polls `check` until it returns true or the deadline passes. */
export async function waitFor(check: () => Promise<boolean>, what: string, timeoutMs: number, everyMs = 25): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await new Promise((r) => setTimeout(r, everyMs));
  }
}
