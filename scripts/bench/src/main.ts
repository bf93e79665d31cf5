/**
 * The benchmark suite: `pnpm bench [name ...] [--scale f] [--full] [--reps n] [--against ref]`.
 * Every figure is a ratio against a baseline measured in the same run, on the same Postgres
 * and Elasticsearch (or OpenSearch with `--sink opensearch`). Each benchmark works in its own fresh database(s) and index prefix and
 * removes them when it ends.
 */
import { execFileSync } from "node:child_process";
import { cpus, loadavg, totalmem } from "node:os";
import { fileURLToPath } from "node:url";
import { ensureElasticsearch, ensureOpenSearch, ensurePostgres, runId } from "@tether/testkit";
import { runAgainst } from "./against/against-run.js";
import { BenchScope, adminQuery, type BenchEnv } from "./bench-scope.js";
import { BenchmarkUnavailable, type Benchmark } from "./benchmark.js";
import { BENCHMARKS } from "./benchmarks/index.js";
import { parseCli } from "./options.js";
import { formatTable, writeReport, type ResultRow, type RunReport } from "./report.js";

const opts = parseCli(process.argv.slice(2));
if (opts.list) {
  for (const b of BENCHMARKS) console.log(`${b.name.padEnd(10)} ${b.title}`);
  process.exit(0);
}
const unknown = opts.only.filter((n) => !BENCHMARKS.some((b) => b.name === n));
if (unknown.length > 0) {
  console.error(`unknown benchmark(s): ${unknown.join(", ")}; known: ${BENCHMARKS.map((b) => b.name).join(", ")}`);
  process.exit(2);
}
const selected: Benchmark[] = opts.only.length ? BENCHMARKS.filter((b) => opts.only.includes(b.name)) : BENCHMARKS;
const unsupported = selected.filter((b) => !(b.sinks ?? ["elasticsearch"]).includes(opts.sink));
if (unsupported.length > 0) {
  console.error(`--sink ${opts.sink}: ${unsupported.map((b) => b.name).join(", ")} cannot run against it; these can: ${BENCHMARKS.filter((b) => b.sinks?.includes(opts.sink)).map((b) => b.name).join(", ")}`);
  process.exit(2);
}
const log = (msg: string) => console.error(`${new Date().toISOString().slice(11, 19)} ${msg}`);

const startedAt = new Date();
const [postgres, engine] = await Promise.all([ensurePostgres(), opts.sink === "opensearch" ? ensureOpenSearch() : ensureElasticsearch()]);
log(`postgres via ${postgres.via} (${postgres.detail}); ${opts.sink} via ${engine.via} (${engine.detail})`);
if (opts.against) {
  // Both sides' processes use the services found here.
  const serviceEnv = { DATABASE_URL: postgres.url, ...(opts.sink === "opensearch" ? { OPENSEARCH_URL: engine.url } : { ELASTICSEARCH_URL: engine.url }) };
  const repo = fileURLToPath(new URL("../../..", import.meta.url)).replace(/\/$/, "");
  process.exit(await runAgainst({ repo, ref: opts.against, opts, serviceEnv, log }));
}
const env: BenchEnv = { pgUrl: postgres.url, sinkKind: opts.sink, esUrl: engine.url, runId: runId(), sizes: opts.sizes, log };

let current: BenchScope | undefined;
for (const sig of ["SIGINT", "SIGTERM"] as const) {
  process.once(sig, () => {
    log(`${sig}: cleaning up`);
    void (current?.close() ?? Promise.resolve()).finally(() => process.exit(130));
  });
}

const environment = await describeEnvironment(env);
const rows: ResultRow[] = [];
const outcomes: RunReport["benchmarks"] = [];
for (const bench of selected) {
  const scope = new BenchScope(env, bench.name);
  current = scope;
  log(`${bench.name}: ${bench.title}`);
  const t = performance.now();
  try {
    const out = await bench.run(scope);
    rows.push(...out.rows);
    outcomes.push({ name: bench.name, status: "ok", durationMs: performance.now() - t, ...(out.info ? { info: out.info } : {}) });
    console.log(formatTable(out.rows) + "\n");
  } catch (err) {
    const unavailable = err instanceof BenchmarkUnavailable;
    log(`${bench.name} ${unavailable ? "unavailable" : "FAILED"}: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}`);
    outcomes.push({ name: bench.name, status: unavailable ? "unavailable" : "failed", durationMs: performance.now() - t, error: String(err) });
  } finally {
    await scope.close();
    current = undefined;
  }
  log(`${bench.name}: ${((performance.now() - t) / 1000).toFixed(1)} s`);
}

const report: RunReport = {
  startedAt: startedAt.toISOString(),
  finishedAt: new Date().toISOString(),
  command: `pnpm bench ${process.argv.slice(2).join(" ")}`.trim(),
  environment: { ...environment, loadAverageAtEnd: loadavg() },
  benchmarks: outcomes,
  rows,
};
console.log(`\n=== tether benchmarks (${report.command}; ${elapsed(startedAt)}) ===`);
console.log(`Medians over repetitions with [min–max] or [p25–p75] as the spread column says; ratio = tether ÷ baseline, paired per repetition.`);
console.log(formatTable(rows));
for (const o of outcomes.filter((x) => x.status !== "ok")) console.log(`\n${o.name}: ${o.status}: ${o.error}`);
console.log(`\nJSON: ${writeReport(opts.outDir, report)}`);
process.exitCode = outcomes.some((o) => o.status === "failed") ? 1 : 0;

function elapsed(since: Date): string {
  const s = Math.round((Date.now() - since.getTime()) / 1000);
  return `${Math.floor(s / 60)} min ${s % 60} s`;
}

async function describeEnvironment(e: BenchEnv): Promise<Record<string, unknown>> {
  const settings = await adminQuery(
    e.pgUrl,
    `SELECT name, setting, unit FROM pg_settings WHERE name IN ('server_version', 'shared_buffers', 'autovacuum', 'synchronous_commit', 'fsync', 'work_mem', 'max_wal_size') ORDER BY name`,
  );
  const es = (await fetch(new URL("/_nodes/_local/jvm,os", e.esUrl))
    .then((r) => r.json())
    .catch(() => ({}))) as { nodes?: Record<string, { version?: string; jvm?: { mem?: { heap_max_in_bytes?: number } } }> };
  const node = Object.values(es.nodes ?? {})[0];
  let commit = "unknown";
  try {
    commit = execFileSync("git", ["rev-parse", "--short", "HEAD"], { encoding: "utf8" }).trim();
  } catch {
    // not a checkout
  }
  return {
    node: process.version,
    cpus: cpus().length,
    cpuModel: cpus()[0]?.model,
    memoryGb: Math.round(totalmem() / 2 ** 30),
    loadAverageAtStart: loadavg(),
    gitCommit: commit,
    postgres: Object.fromEntries(settings.rows.map((r: { name: string; setting: string; unit: string | null }) => [r.name, r.unit ? `${r.setting} ${r.unit}` : r.setting])),
    sink: e.sinkKind,
    [e.sinkKind]: { version: node?.version, heapMaxMb: node?.jvm?.mem?.heap_max_in_bytes ? Math.round(node.jvm.mem.heap_max_in_bytes / 2 ** 20) : undefined },
    sizes: e.sizes,
    scale: opts.scale,
    full: opts.full,
    note: "the machine may be shared with other workloads; figures are paired per repetition to limit the effect of noise",
  };
}
