import { spawn, type ChildProcess } from "node:child_process";
import { fileURLToPath } from "node:url";
import { freePort } from "@tether/testkit";

const REPO = fileURLToPath(new URL("../../../..", import.meta.url));
const CONFIG = fileURLToPath(new URL("./bench.config.ts", import.meta.url));

export interface DaemonProcess {
  stop(): Promise<void>;
}

/**
 * The drainer daemon as an operator runs it (`services/drainer/src/main.ts`), at its defaults
 * (drain loop with LISTEN wake-ups, maintenance every 15 s, the version floor check, scheduled
 * verify), on the benchmark's database and index prefix; ready once /healthz answers.
 */
export async function startDaemonProcess(env: Record<string, string>): Promise<DaemonProcess> {
  const port = await freePort();
  const child: ChildProcess = spawn(process.execPath, ["--conditions=source", "--import", "tsx", "services/drainer/src/main.ts"], {
    cwd: REPO,
    env: { PATH: process.env.PATH ?? "", LOG_LEVEL: "warn", METRICS_PORT: String(port), TETHER_CONFIG: CONFIG, ...env },
    stdio: ["ignore", "ignore", "pipe"],
  });
  let stderr = "";
  child.stderr!.on("data", (d: Buffer) => (stderr = (stderr + d.toString()).slice(-4000)));
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
  const deadline = Date.now() + 120_000;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`the drainer exited with ${child.exitCode}: ${stderr}`);
    try {
      if ((await fetch(`http://127.0.0.1:${port}/healthz`)).status < 500) break;
    } catch {
      // not listening yet
    }
    if (Date.now() > deadline) throw new Error(`the drainer did not answer /healthz within 120 s: ${stderr}`);
    await new Promise((r) => setTimeout(r, 100));
  }
  return {
    async stop() {
      if (child.exitCode === null) child.kill("SIGTERM");
      const t = setTimeout(() => child.kill("SIGKILL"), 15_000);
      await exited;
      clearTimeout(t);
    },
  };
}
