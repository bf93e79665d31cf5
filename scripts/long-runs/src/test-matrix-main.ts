/** scripts/test-matrix: one vitest run per combination of test/matrix/matrix-combinations.ts, against real servers. */
import { spawn, type ChildProcess } from "node:child_process";
import { mkdirSync, readFileSync, rmSync } from "node:fs";
import { join } from "node:path";
import { ensureElasticsearch, ensureOpenSearch, ensurePostgres, ensureVersionedEngine, versionedPostgres, type Provisioned, type ServiceRecord } from "@tether/testkit";
import { MATRIX_COMBINATIONS, suiteFiles, type MatrixCombination } from "../../../test/matrix/matrix-combinations.js";

interface Outcome {
  combination: MatrixCombination;
  passed: boolean;
  tests: { passed: number; failed: number };
  seconds: number;
  log: string;
  error?: string;
}

const root = join(import.meta.dirname, "..", "..", "..");
const out = join(root, ".cache", "test-matrix");

function parseArgs(argv: string[]): { only?: string[]; list: boolean; json: boolean } {
  const only = argv.includes("--only") ? argv[argv.indexOf("--only") + 1]?.split(",").filter(Boolean) : undefined;
  const known = new Set(MATRIX_COMBINATIONS.map((c) => c.name));
  for (const n of only ?? []) if (!known.has(n)) throw new Error(`unknown combination "${n}"; known: ${[...known].join(", ")}`);
  const unknown = argv.filter((a, i) => a.startsWith("--") && !["--only", "--list", "--json"].includes(a) && argv[i - 1] !== "--only");
  if (unknown.length) throw new Error(`unknown option ${unknown.join(" ")}; use --only <a,b> | --list | --json`);
  return { ...(only ? { only } : {}), list: argv.includes("--list"), json: argv.includes("--json") };
}

/** Provisions each server once, on first use, and lets it go after its last combination. */
class Servers {
  private readonly held = new Map<string, Promise<Provisioned>>();

  constructor(private readonly plan: readonly MatrixCombination[]) {}

  private static engineKey = (c: MatrixCombination) => `${c.engine.product}@${c.engine.major}`;
  private static postgresKey = (c: MatrixCombination) => `postgres@${c.postgres}`;

  private hold(key: string, provision: () => Promise<Provisioned>): Promise<ServiceRecord> {
    if (!this.held.has(key)) this.held.set(key, provision());
    return this.held.get(key)!.then((p) => p.record);
  }

  engine(c: MatrixCombination): Promise<ServiceRecord> {
    const { product, major } = c.engine;
    // The usual majors come as the rest of the suite gets them: from the environment, else provisioned.
    const usual = (product === "elasticsearch" && major === 8) || (product === "opensearch" && major === 2);
    return this.hold(Servers.engineKey(c), async () =>
      usual ? { record: await (product === "elasticsearch" ? ensureElasticsearch() : ensureOpenSearch()) } : ensureVersionedEngine(product, String(major)),
    );
  }

  postgres(c: MatrixCombination): Promise<ServiceRecord> {
    return this.hold(Servers.postgresKey(c), async () => (c.postgres === 15 ? { record: await ensurePostgres() } : versionedPostgres(String(c.postgres))));
  }

  /** Releases what no later combination of the plan needs. */
  async after(index: number): Promise<void> {
    const later = this.plan.slice(index + 1);
    for (const key of [...this.held.keys()]) {
      if (later.some((c) => Servers.engineKey(c) === key || Servers.postgresKey(c) === key)) continue;
      await this.release(key);
    }
  }

  async releaseAll(): Promise<void> {
    for (const key of [...this.held.keys()]) await this.release(key);
  }

  private async release(key: string): Promise<void> {
    const p = this.held.get(key);
    this.held.delete(key);
    await (await p?.catch(() => undefined))?.release?.();
  }
}

let running: ChildProcess | undefined;

function runVitest(c: MatrixCombination, env: NodeJS.ProcessEnv, log: string, json: string): Promise<number> {
  const args = ["exec", "vitest", "run", "--project", c.engine.product, ...suiteFiles(c.engine.product, c.suites), "--reporter=default", "--reporter=json", `--outputFile.json=${json}`];
  return new Promise((resolve, reject) => {
    const child = spawn("sh", ["-c", `exec pnpm ${args.map((a) => `'${a}'`).join(" ")} >'${log}' 2>&1`], { cwd: root, env, detached: true, stdio: "ignore" });
    running = child;
    child.once("error", reject);
    child.once("exit", (code) => {
      running = undefined;
      resolve(code ?? 1);
    });
  });
}

function testCounts(json: string): { passed: number; failed: number } {
  try {
    const r = JSON.parse(readFileSync(json, "utf8")) as { numPassedTests?: number; numFailedTests?: number; numFailedTestSuites?: number };
    // A file whose hooks fail fails without a failed test: count it, as scripts/test does.
    const failed = r.numFailedTests ?? 0;
    return { passed: r.numPassedTests ?? 0, failed: failed === 0 && (r.numFailedTestSuites ?? 0) > 0 ? r.numFailedTestSuites! : failed };
  } catch {
    return { passed: 0, failed: 1 };
  }
}

async function runCombination(c: MatrixCombination, servers: Servers): Promise<Outcome> {
  const started = Date.now();
  const log = join(out, `${c.name}.log`);
  const json = join(out, `${c.name}.json`);
  rmSync(json, { force: true });
  try {
    const [engine, postgres] = await Promise.all([servers.engine(c), servers.postgres(c)]);
    const env = { ...process.env, DATABASE_URL: postgres.url, [c.engine.product === "elasticsearch" ? "ELASTICSEARCH_URL" : "OPENSEARCH_URL"]: engine.url };
    const code = await runVitest(c, env, log, json);
    const tests = testCounts(json);
    return { combination: c, passed: code === 0 && tests.failed === 0 && tests.passed > 0, tests, seconds: (Date.now() - started) / 1000, log };
  } catch (err) {
    return { combination: c, passed: false, tests: { passed: 0, failed: 0 }, seconds: (Date.now() - started) / 1000, log, error: err instanceof Error ? err.message : String(err) };
  }
}

const ENGINE_NAMES = { elasticsearch: "Elasticsearch", opensearch: "OpenSearch" } as const;
const minutes = (s: number) => `${Math.floor(s / 60)}m${String(Math.round(s % 60)).padStart(2, "0")}s`;

function row(o: Outcome): string {
  const c = o.combination;
  const engine = `${ENGINE_NAMES[c.engine.product]} ${c.engine.major}`.padEnd(16);
  const tests = `${o.tests.passed} passed, ${o.tests.failed} failed`.padEnd(22);
  return `${c.name.padEnd(10)} ${engine} Postgres ${String(c.postgres).padEnd(3)} ${c.suites.join("+").padEnd(30)} ${(o.passed ? "passed" : "FAILED").padEnd(7)} ${tests} ${minutes(o.seconds)}${o.error ? `  ${o.error}` : ""}`;
}

/** Runs the matrix (see scripts/test-matrix.ts); resolves with the exit code. */
export async function testMatrixMain(argv: string[]): Promise<number> {
  const opts = parseArgs(argv);
  const plan = MATRIX_COMBINATIONS.filter((c) => !opts.only || opts.only.includes(c.name));
  if (opts.list) {
    for (const c of plan) console.log(`${c.name.padEnd(10)} ${ENGINE_NAMES[c.engine.product]} ${c.engine.major} × Postgres ${c.postgres}: ${c.suites.join(", ")}`);
    return 0;
  }
  mkdirSync(out, { recursive: true });
  const servers = new Servers(plan);
  const stop = (signal: NodeJS.Signals) => {
    if (running?.pid) process.kill(-running.pid, "SIGTERM");
    void servers.releaseAll().finally(() => process.exit(signal === "SIGINT" ? 130 : 143));
  };
  process.once("SIGINT", stop);
  process.once("SIGTERM", stop);
  const outcomes: Outcome[] = [];
  const began = Date.now();
  try {
    for (const [i, c] of plan.entries()) {
      if (!opts.json) console.error(`test-matrix: ${c.name} (${ENGINE_NAMES[c.engine.product]} ${c.engine.major} × Postgres ${c.postgres}: ${c.suites.join(", ")}) …`);
      const o = await runCombination(c, servers);
      outcomes.push(o);
      if (!opts.json) console.error(`test-matrix: ${row(o)}`);
      await servers.after(i);
    }
  } finally {
    await servers.releaseAll();
  }
  const total = (Date.now() - began) / 1000;
  const failed = outcomes.filter((o) => !o.passed).length;
  if (opts.json) {
    console.log(JSON.stringify({ combinations: outcomes.map((o) => ({ name: o.combination.name, engine: o.combination.engine, postgres: o.combination.postgres, suites: o.combination.suites, passed: o.passed, tests: o.tests, seconds: o.seconds, log: o.log, ...(o.error ? { error: o.error } : {}) })), seconds: total }, null, 2));
  } else {
    console.log(`${"combination".padEnd(10)} ${"engine".padEnd(16)} ${"postgres".padEnd(12)} ${"suites".padEnd(30)} ${"result".padEnd(7)} ${"tests".padEnd(22)} duration`);
    for (const o of outcomes) console.log(row(o));
    console.log(`total ${minutes(total)}; logs in .cache/test-matrix/`);
    console.log(`${outcomes.length - failed} passed, ${failed} failed`);
  }
  return failed === 0 ? 0 : 1;
}

