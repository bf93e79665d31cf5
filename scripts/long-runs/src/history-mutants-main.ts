import { execFileSync, spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import { existsSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { applyMutant, HISTORY_MUTANTS, type Mutant } from "./history-mutants.js";

type Sink = "elasticsearch" | "opensearch";

interface Options {
  sinks: Sink[];
  mutants: Mutant[];
  /** TETHER_HISTORY_OPERATIONS for every run; default: the test's own (CI's) budget. */
  operations?: number;
  /** Runs the unpatched copy first, on each sink: a mutant is "caught" only if it converges. */
  baseline: boolean;
  keep: boolean;
}

/** What one run of the history test reported (test/history/history.test.ts, TETHER_HISTORY_REPORT). */
interface RunReport {
  sink: Sink;
  seed: number;
  histories: number;
  operations: number;
  failure?: { seed: number; history: string; divergences: string };
}

interface Outcome {
  what: string;
  sink: Sink;
  report: RunReport | undefined;
  exitCode: number | null;
  seconds: number;
}

function parse(argv: string[]): Options {
  const o: Options = { sinks: ["elasticsearch", "opensearch"], mutants: [...HISTORY_MUTANTS], baseline: true, keep: false };
  const picked: Mutant[] = [];
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i]!;
    const next = () => {
      const v = argv[++i];
      if (v === undefined) throw new Error(`${a} needs a value`);
      return v;
    };
    if (a === "--sink") {
      const v = next();
      if (v !== "elasticsearch" && v !== "opensearch" && v !== "both") throw new Error("--sink takes elasticsearch, opensearch or both");
      o.sinks = v === "both" ? ["elasticsearch", "opensearch"] : [v];
    } else if (a === "--mutant") {
      const name = next();
      const m = HISTORY_MUTANTS.find((x) => x.name === name);
      if (!m) throw new Error(`no mutant ${name} (have: ${HISTORY_MUTANTS.map((x) => x.name).join(", ")})`);
      picked.push(m);
    } else if (a === "--operations") o.operations = Number(next());
    else if (a === "--no-baseline") o.baseline = false;
    else if (a === "--keep") o.keep = true;
    else throw new Error(`unknown option ${a}`);
  }
  if (picked.length > 0) o.mutants = picked;
  if (o.operations !== undefined && !(Number.isSafeInteger(o.operations) && o.operations > 0)) throw new Error("--operations takes a positive integer");
  return o;
}

const git = (cwd: string, ...args: string[]) => execFileSync("git", args, { cwd, encoding: "utf8", stdio: ["ignore", "pipe", "pipe"] });

/** A scratch copy of the checked-out commit (a detached worktree) with its own node_modules. */
function scratchCopy(repo: string, log: (l: string) => void): string {
  const dir = join(tmpdir(), `tether-mutants-${randomBytes(3).toString("hex")}`);
  git(repo, "worktree", "add", "--detach", dir, "HEAD");
  log(`history-mutants: scratch copy of ${git(repo, "rev-parse", "--short", "HEAD").trim()} in ${dir}; installing its packages (offline)`);
  execFileSync("pnpm", ["install", "--offline", "--frozen-lockfile", "--reporter=silent"], { cwd: dir, stdio: ["ignore", "ignore", "inherit"] });
  return dir;
}

/** The history test at CI's budget in `dir`, on one sink, without shrinking (the first divergence is the catch). */
async function runTester(dir: string, sink: Sink, o: Options, what: string, log: (l: string) => void): Promise<Outcome> {
  const reportFile = join(dir, `.history-mutant-${sink}.json`);
  rmSync(reportFile, { force: true });
  const started = performance.now();
  const env = { ...process.env, TETHER_HISTORY_MAX_SHRINKS: "0", TETHER_HISTORY_REPORT: reportFile, ...(o.operations ? { TETHER_HISTORY_OPERATIONS: String(o.operations) } : {}) };
  const child = spawn("pnpm", ["exec", "vitest", "run", "test/history/history.test.ts", "--project", sink], { cwd: dir, env, stdio: ["ignore", "pipe", "pipe"] });
  let tail = "";
  const keep = (d: Buffer) => (tail = (tail + d.toString("utf8")).slice(-4000));
  child.stdout.on("data", keep);
  child.stderr.on("data", keep);
  const exitCode = await new Promise<number | null>((resolve) => child.once("exit", (code) => resolve(code)));
  const seconds = Math.round((performance.now() - started) / 1000);
  const report = existsSync(reportFile) ? (JSON.parse(readFileSync(reportFile, "utf8")) as RunReport) : undefined;
  if (!report) log(`history-mutants: ${what} on ${sink}: the test wrote no report (exit ${exitCode}); its output ended with:\n${tail}`);
  return { what, sink, report, exitCode, seconds };
}

const firstLine = (s: string) => s.split("\n")[0]!.slice(0, 240);

function describe(out: Outcome, expectCaught: boolean): { line: string; ok: boolean } {
  const r = out.report;
  const at = `${out.what.padEnd(34)} ${out.sink.padEnd(13)}`;
  if (!r) return { line: `${at} ERROR: no report (exit ${out.exitCode}), ${out.seconds} s`, ok: false };
  if (r.failure) {
    const commands = r.failure.history.split("\n").filter((l) => l.startsWith("  ") && !/^\s+(bigint|uuid|text):/.test(l)).length;
    const line = `${at} ${expectCaught ? "caught" : "DIVERGED"} after ${r.operations} operations (history seed ${r.failure.seed}, its ${commands} commands), ${out.seconds} s: ${firstLine(r.failure.divergences)}`;
    return { line, ok: expectCaught };
  }
  return { line: `${at} ${expectCaught ? "NOT CAUGHT" : "converged"} in ${r.operations} operations (${r.histories} histories), ${out.seconds} s`, ok: !expectCaught };
}

/** `scripts/history-mutants`: exit 0 when every mutant was caught on every sink (and the baseline converged), 1 otherwise, 2 on bad usage. */
export async function historyMutantsMain(argv: string[], repo: string): Promise<number> {
  let o: Options;
  try {
    o = parse(argv);
  } catch (err) {
    process.stderr.write(`history-mutants: ${(err as Error).message}\n`);
    return 2;
  }
  const log = (l: string) => process.stderr.write(`${l}\n`);
  const dir = scratchCopy(repo, log);
  const lines: string[] = [];
  let ok = true;
  const started = performance.now();
  const report = (out: Outcome, expectCaught: boolean) => {
    const d = describe(out, expectCaught);
    ok &&= d.ok;
    lines.push(d.line);
    process.stdout.write(`${d.line}\n`);
  };
  try {
    if (o.baseline) for (const sink of o.sinks) report(await runTester(dir, sink, o, "(no mutant)", log), false);
    for (const m of o.mutants) {
      git(dir, "checkout", "--", ".");
      applyMutant(m, (f) => readFileSync(join(dir, f), "utf8"), (f, text) => writeFileSync(join(dir, f), text));
      log(`history-mutants: ${m.name}: ${m.bug}`);
      for (const sink of o.sinks) report(await runTester(dir, sink, o, m.name, log), true);
    }
  } finally {
    if (o.keep) log(`history-mutants: the scratch copy stays in ${dir}`);
    else git(repo, "worktree", "remove", "--force", dir);
  }
  process.stdout.write(`history-mutants: ${ok ? "every mutant caught" : "a mutant survived (or the baseline diverged)"} in ${Math.round((performance.now() - started) / 60_000)} min\n`);
  return ok ? 0 : 1;
}
