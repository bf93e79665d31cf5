/**
 * `pnpm bench <name…> --against <ref>`: the same benchmarks on this tree and on a worktree of
 * `ref`, in one run, paired per repetition: ours, theirs, ours, theirs… Each side is one
 * benchmark process with `--reps 1` (its own databases and index prefix, dropped when it ends), so
 * repetition i of both sides ran back to back under the same load; release-comparison.ts pairs
 * their figures.
 */
import { spawn } from "node:child_process";
import { mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { loadavg, tmpdir } from "node:os";
import { join } from "node:path";
import type { CliOptions } from "../options.js";
import type { RunReport } from "../report.js";
import { prepareRefWorktree, resolveCommit } from "./ref-worktree.js";
import { compareReleases, type ComparisonResult } from "./release-comparison.js";
import { formatAgainstTable } from "./against-table.js";

export interface AgainstRunInput {
  /** This checkout's root. */
  repo: string;
  ref: string;
  opts: CliOptions;
  /** URLs every child uses (the services this process found), as env variables. */
  serviceEnv: Record<string, string>;
  log: (m: string) => void;
}

/** The arguments both sides get: the same benchmarks and sizes, one repetition, their own report folder. */
export function childArgs(opts: CliOptions, outDir: string): string[] {
  return [
    ...opts.only,
    ...(opts.scale !== 1 ? ["--scale", String(opts.scale)] : []),
    ...(opts.full ? ["--full"] : []),
    ...(opts.sink !== "elasticsearch" ? ["--sink", opts.sink] : []),
    "--reps",
    "1",
    "--out",
    outDir,
  ];
}

/** Set by a signal: the run stops after the side in flight has cleaned up. */
let interrupted = false;

interface SideRun {
  report: RunReport | undefined;
  exitCode: number | null;
}

/** One benchmark process in `root`'s scripts/bench; its progress goes to stderr with a prefix. */
function runSide(root: string, args: string[], env: Record<string, string>, label: string, stdoutFile: string, outDir: string): Promise<SideRun> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ["--conditions=source", "--import", "tsx", "src/main.ts", ...args], {
      cwd: join(root, "scripts", "bench"),
      env: { ...process.env, ...env },
      stdio: ["ignore", "pipe", "pipe"],
    });
    // Ctrl-C or a kill of this process reaches the benchmark process, which drops its databases.
    const forward = (sig: NodeJS.Signals) => {
      interrupted = true;
      child.kill(sig);
    };
    process.on("SIGINT", forward);
    process.on("SIGTERM", forward);
    let out = "";
    let tail = "";
    child.stdout.on("data", (d: Buffer) => (out += d.toString()));
    child.stderr.on("data", (d: Buffer) => {
      const text = tail + d.toString();
      const lines = text.split("\n");
      tail = lines.pop() ?? "";
      for (const l of lines) process.stderr.write(`[${label}] ${l}\n`);
    });
    child.on("error", reject);
    child.on("close", (code) => {
      process.off("SIGINT", forward);
      process.off("SIGTERM", forward);
      if (tail) process.stderr.write(`[${label}] ${tail}\n`);
      writeFileSync(stdoutFile, out);
      const json = readdirSync(outDir).filter((f) => f.endsWith(".json"));
      const report = json.length === 1 ? (JSON.parse(readFileSync(join(outDir, json[0]!), "utf8")) as RunReport) : undefined;
      resolve({ report, exitCode: code });
    });
  });
}

export interface AgainstReport {
  startedAt: string;
  finishedAt: string;
  command: string;
  ref: string;
  commit: string;
  worktree: string;
  loadAverage: { start: number[]; end: number[] };
  result: ComparisonResult;
  /** Each repetition's two reports, in the order they ran. */
  repetitions: { ours: RunReport | undefined; theirs: RunReport | undefined }[];
}

/** Runs both sides `reps` times, alternating, prints the comparison table and writes the JSON report. */
export async function runAgainst(input: AgainstRunInput): Promise<number> {
  const { repo, ref, opts, log } = input;
  const startedAt = new Date();
  const loadStart = loadavg();
  const commit = resolveCommit(repo, ref);
  const worktree = prepareRefWorktree(repo, commit, log);
  const short = commit.slice(0, 7);
  const scratch = mkdtempSync(join(tmpdir(), "tether-bench-against-"));
  const repetitions: AgainstReport["repetitions"] = [];
  let failed = false;
  try {
    for (let rep = 0; rep < opts.sizes.reps; rep++) {
      const sides: Partial<Record<"ours" | "theirs", RunReport | undefined>> = {};
      for (const [side, root] of [
        ["ours", repo],
        ["theirs", worktree],
      ] as const) {
        const outDir = join(scratch, `${side}-${rep}`);
        mkdirSync(outDir);
        const label = `${side === "ours" ? "ours" : short} ${rep + 1}/${opts.sizes.reps}`;
        log(`${label}: pnpm bench ${childArgs(opts, outDir).join(" ")} (in ${root})`);
        const r = await runSide(root, childArgs(opts, outDir), input.serviceEnv, label, join(scratch, `${side}-${rep}.stdout`), outDir);
        if (r.exitCode !== 0) {
          failed = true;
          log(`${label}: exited with ${r.exitCode}${r.report ? "" : " and wrote no report"}`);
        }
        sides[side] = r.report;
        if (interrupted) break;
      }
      if (interrupted) {
        log("interrupted: no comparison printed");
        return 130;
      }
      repetitions.push({ ours: sides.ours, theirs: sides.theirs });
    }
  } finally {
    rmSync(scratch, { recursive: true, force: true });
  }
  // A repetition either side lost entirely is dropped from both: its pair is gone.
  const paired = repetitions.filter((r): r is { ours: RunReport; theirs: RunReport } => r.ours !== undefined && r.theirs !== undefined);
  const result = compareReleases(
    paired.map((r) => r.ours.rows),
    paired.map((r) => r.theirs.rows),
    short,
  );
  const report: AgainstReport = {
    startedAt: startedAt.toISOString(),
    finishedAt: new Date().toISOString(),
    command: `pnpm bench ${process.argv.slice(2).join(" ")}`.trim(),
    ref,
    commit,
    worktree,
    loadAverage: { start: loadStart, end: loadavg() },
    result,
    repetitions,
  };
  console.log(`\n=== tether benchmarks against ${ref} (${short}): ${report.command} ===`);
  console.log(
    `${paired.length} of ${repetitions.length} repetitions paired (ours, then ${short}, each a process of its own); ratio = ours ÷ ${short} per repetition, median [min–max]; ` +
      `load average ${loadStart.map((x) => x.toFixed(1)).join(" ")} at the start, ${report.loadAverage.end.map((x) => x.toFixed(1)).join(" ")} at the end.`,
  );
  console.log(formatAgainstTable(result, short));
  mkdirSync(opts.outDir, { recursive: true });
  const file = join(opts.outDir, `${report.startedAt.replace(/[:.]/g, "-")}-against-${short}.json`);
  writeFileSync(file, JSON.stringify(report, null, 2) + "\n");
  console.log(`\nJSON: ${file}`);
  return failed || paired.length === 0 ? 1 : 0;
}
