import { spawn } from "node:child_process";
import { REPO, type HistorySystem } from "./history-system.js";

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
  const child = spawn(process.execPath, ["--conditions=source", "--import", "tsx", "packages/cli/src/main.ts", ...args], {
    cwd: REPO,
    env: { ...process.env, ...sys.env(engineUrl), LOG_LEVEL: "warn" },
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
