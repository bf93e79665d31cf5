import { spawn } from "node:child_process";
import { fileURLToPath } from "node:url";

const REPO = fileURLToPath(new URL("../../..", import.meta.url));
const MAINS = { api: "services/annotations-api/src/main.ts", drainer: "services/drainer/src/main.ts" } as const;

export interface Exited {
  code: number | null;
  stdout: string[];
  stderr: string;
}

/**
 * Runs a service the way an operator does and collects everything it prints until it exits on
 * its own (a start-up failure). Only the given variables and PATH: nothing leaks in from the test.
 */
export function runToExit(kind: keyof typeof MAINS, env: Record<string, string>, timeoutMs = 60_000): Promise<Exited> {
  const child = spawn(process.execPath, ["--conditions=source", "--import", "tsx", MAINS[kind]], {
    cwd: REPO,
    env: { PATH: process.env.PATH ?? "", LOG_LEVEL: "info", PORT: "0", METRICS_PORT: "0", ...env },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let out = "";
  let err = "";
  child.stdout.setEncoding("utf8").on("data", (d: string) => (out += d));
  child.stderr.setEncoding("utf8").on("data", (d: string) => (err += d));
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      child.kill("SIGKILL");
      reject(new Error(`${kind} did not exit within ${timeoutMs} ms:\n${out}\n${err}`));
    }, timeoutMs);
    child.once("exit", (code) => {
      clearTimeout(timer);
      resolve({ code, stdout: out.split("\n").filter(Boolean), stderr: err });
    });
  });
}
