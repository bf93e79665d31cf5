import { spawn } from "node:child_process";
import { existsSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { REPO, type HistorySystem } from "./history-system.js";

/**
 * How a history starts `tether`: from the sources through tsx (the default, no build needed), or
 * with TETHER_HISTORY_CLI=built the package's own bin (`packages/cli/dist/main.js`, after
 * `pnpm build`), which starts in about half the CPU time: the long campaign builds and uses it.
 */
export function tetherCommand(): string[] {
  if (process.env.TETHER_HISTORY_CLI !== "built") return ["--conditions=source", "--import", "tsx", "packages/cli/src/main.ts"];
  const bin = join(REPO, "packages/cli/dist/main.js");
  if (!existsSync(bin)) throw new Error(`TETHER_HISTORY_CLI=built, but ${bin} is missing: run pnpm build first`);
  return [bin];
}

/** V8's code cache, kept between the many short `tether` processes a campaign starts. */
const COMPILE_CACHE = join(tmpdir(), "tether-history-compile-cache");

export interface TetherRun {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
}

export interface TetherProcess {
  args: string[];
  done: Promise<TetherRun>;
  kill(): Promise<void>;
}

/** Starts `tether <args>` as an operator runs it, against this history's database and engine. */
export function startTether(sys: HistorySystem, args: string[], engineUrl?: string): TetherProcess {
  const child = spawn(process.execPath, [...tetherCommand(), ...args], {
    cwd: REPO,
    env: { ...process.env, NODE_COMPILE_CACHE: COMPILE_CACHE, ...sys.env(engineUrl), LOG_LEVEL: "warn" },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let stdout = "";
  let stderr = "";
  child.stdout.on("data", (d: Buffer) => (stdout += d.toString("utf8")));
  child.stderr.on("data", (d: Buffer) => (stderr += d.toString("utf8")));
  const done = new Promise<TetherRun>((resolve) => child.once("exit", (code, signal) => resolve({ code, signal, stdout, stderr })));
  return {
    args,
    done,
    async kill() {
      if (child.exitCode === null && child.signalCode === null) child.kill("SIGKILL");
      await done;
    },
  };
}

/** Runs `tether <args> --json` to its end and parses its JSON document. */
export async function runTetherJson<T>(sys: HistorySystem, args: string[]): Promise<{ run: TetherRun; json: T | undefined }> {
  const run = await startTether(sys, [...args, "--json"]).done;
  let json: T | undefined;
  try {
    json = JSON.parse(run.stdout) as T;
  } catch {
    json = undefined;
  }
  return { run, json };
}
