import { spawn, type ChildProcess } from "node:child_process";
import { fileURLToPath } from "node:url";

const repoRoot = fileURLToPath(new URL("../../..", import.meta.url));

export interface DrainerProcess {
  child: ChildProcess;
  port: number;
  /** Every JSON log line so far (non-JSON stdout lines, e.g. console spans, are kept as `{ raw }`). */
  logs: Record<string, unknown>[];
  /** Resolves with the first log line matching `pred`, rejecting at the deadline. */
  waitForLog(pred: (line: Record<string, unknown>) => boolean, timeoutMs?: number): Promise<Record<string, unknown>>;
  /** Resolves with the exit code (or signal name) once the process has exited. */
  exited: Promise<number | string>;
  /** SIGKILL if still running (afterAll safety net). */
  kill(): void;
}

/**
 * Spawns the real drainer (`services/drainer/src/main.ts` via tsx, as an operator would run it)
 * and waits for its "listening" line.
 */
export async function spawnDrainer(env: Record<string, string>, opts: { timeoutMs?: number } = {}): Promise<DrainerProcess> {
  const child = spawn(process.execPath, ["--conditions=source", "--import", "tsx", "services/drainer/src/main.ts"], {
    cwd: repoRoot,
    env: { PATH: process.env.PATH ?? "", METRICS_PORT: "0", LOG_LEVEL: "info", ...env },
    stdio: ["ignore", "pipe", "pipe"],
  });
  const logs: Record<string, unknown>[] = [];
  const waiters: { pred: (l: Record<string, unknown>) => boolean; resolve: (l: Record<string, unknown>) => void }[] = [];
  let stderr = "";
  let buffered = "";
  child.stdout!.setEncoding("utf8").on("data", (chunk: string) => {
    buffered += chunk;
    let nl: number;
    while ((nl = buffered.indexOf("\n")) >= 0) {
      const text = buffered.slice(0, nl);
      buffered = buffered.slice(nl + 1);
      let line: Record<string, unknown>;
      try {
        line = JSON.parse(text) as Record<string, unknown>;
      } catch {
        line = { raw: text };
      }
      logs.push(line);
      for (const w of [...waiters]) {
        if (w.pred(line)) {
          waiters.splice(waiters.indexOf(w), 1);
          w.resolve(line);
        }
      }
    }
  });
  child.stderr!.setEncoding("utf8").on("data", (chunk: string) => {
    stderr += chunk;
  });
  const exited = new Promise<number | string>((resolve) => child.once("exit", (code, signal) => resolve(code ?? signal ?? "unknown")));

  const waitForLog = (pred: (l: Record<string, unknown>) => boolean, timeoutMs = 30_000) =>
    new Promise<Record<string, unknown>>((resolve, reject) => {
      const hit = logs.find(pred);
      if (hit) return resolve(hit);
      const timer = setTimeout(() => reject(new Error(`no matching drainer log line within ${timeoutMs} ms; stderr:\n${stderr}\nstdout:\n${logs.map((l) => JSON.stringify(l)).join("\n")}`)), timeoutMs);
      const w = {
        pred,
        resolve: (l: Record<string, unknown>) => {
          clearTimeout(timer);
          resolve(l);
        },
      };
      waiters.push(w);
      void exited.then((code) => {
        if (!waiters.includes(w)) return;
        clearTimeout(timer);
        reject(new Error(`drainer exited (${String(code)}) before the awaited log line; stderr:\n${stderr}`));
      });
    });

  const listening = await waitForLog((l) => l.msg === "listening", opts.timeoutMs ?? 60_000);
  return {
    child,
    port: Number(listening.port),
    logs,
    waitForLog,
    exited,
    kill() {
      if (child.exitCode === null && child.signalCode === null) child.kill("SIGKILL");
    },
  };
}
