import { spawn, type ChildProcess } from "node:child_process";
import { fileURLToPath } from "node:url";

const REPO = fileURLToPath(new URL("../../..", import.meta.url));
const MAINS = {
  api: "services/annotations-api/src/main.ts",
  drainer: "services/drainer/src/main.ts",
} as const;

export type ServiceKind = keyof typeof MAINS;

export interface ServiceProcess {
  kind: ServiceKind;
  child: ChildProcess;
  pid: number;
  /** Port from the "listening" log line. */
  port: number;
  url: string;
  /** Last log lines (stdout and stderr), for failure messages. */
  logs: string[];
  /** Resolves with the exit code or signal once the process has exited. */
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  /** SIGKILL, and wait for the exit. */
  kill(): Promise<void>;
  /** SIGTERM, and wait for the exit (SIGKILL after `graceMs`). */
  stop(graceMs?: number): Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

/**
 * Spawns a service the way an operator runs it (`node --conditions=source --import tsx
 * services/<svc>/src/main.ts`) with PORT / METRICS_PORT 0, and resolves once it logged its
 * "listening" line.
 */
export async function spawnService(kind: ServiceKind, env: Record<string, string>, opts: { startTimeoutMs?: number; /** Log lines kept (the newest). Default 200; Infinity keeps all (a secret scan). */ keepLines?: number } = {}): Promise<ServiceProcess> {
  const keepLines = opts.keepLines ?? 200;
  const portVar = kind === "api" ? "PORT" : "METRICS_PORT";
  const child = spawn(process.execPath, ["--conditions=source", "--import", "tsx", MAINS[kind]], {
    cwd: REPO,
    env: { ...process.env, LOG_LEVEL: "info", [portVar]: "0", ...env },
    stdio: ["ignore", "pipe", "pipe"],
  });
  const logs: string[] = [];
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => child.once("exit", (code, signal) => resolve({ code, signal })));
  const port = await new Promise<number>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`${kind} did not log "listening" within ${opts.startTimeoutMs ?? 60_000} ms:\n${logs.join("\n")}`)), opts.startTimeoutMs ?? 60_000);
    let buf = "";
    const onLine = (line: string) => {
      logs.push(line);
      if (logs.length > keepLines) logs.shift();
      if (!line.includes('"listening"')) return;
      try {
        const rec = JSON.parse(line) as { msg?: string; port?: number };
        if (rec.msg === "listening" && typeof rec.port === "number") {
          clearTimeout(timer);
          resolve(rec.port);
        }
      } catch {
        // not JSON
      }
    };
    child.stdout!.on("data", (d: Buffer) => {
      buf += d.toString("utf8");
      let i: number;
      while ((i = buf.indexOf("\n")) >= 0) {
        onLine(buf.slice(0, i));
        buf = buf.slice(i + 1);
      }
    });
    child.stderr!.on("data", (d: Buffer) => {
      for (const l of d.toString("utf8").split("\n")) if (l) logs.push(`[stderr] ${l}`);
      while (logs.length > keepLines) logs.shift();
    });
    void exited.then((e) => {
      clearTimeout(timer);
      reject(new Error(`${kind} exited (${JSON.stringify(e)}) before listening:\n${logs.join("\n")}`));
    });
  });
  return {
    kind,
    child,
    pid: child.pid!,
    port,
    url: `http://127.0.0.1:${port}`,
    logs,
    exited,
    async kill() {
      if (child.exitCode === null && child.signalCode === null) child.kill("SIGKILL");
      await exited;
    },
    async stop(graceMs = 30_000) {
      if (child.exitCode !== null || child.signalCode !== null) return exited;
      child.kill("SIGTERM");
      const t = setTimeout(() => child.kill("SIGKILL"), graceMs);
      const e = await exited;
      clearTimeout(t);
      return e;
    },
  };
}

/** Stops every process still running (afterAll). */
export async function stopAll(procs: Iterable<ServiceProcess | undefined>): Promise<void> {
  await Promise.all([...procs].map((p) => p?.stop(10_000)));
}
