import { spawn, type ChildProcess } from "node:child_process";
import { fileURLToPath } from "node:url";
import { freePort } from "@tether/testkit";

const REPO = fileURLToPath(new URL("../../..", import.meta.url));

export interface ApiProcess {
  url: string;
  stop(): Promise<void>;
}

/**
 * The reference API as an operator runs it (`services/annotations-api/src/main.ts`), in its own
 * process so the load generator does not share its event loop; ready once /healthz answers.
 */
export async function startApiProcess(env: Record<string, string>, opts: { stagesFile?: string } = {}): Promise<ApiProcess> {
  const port = await freePort();
  // With `stagesFile`, the process sums its write stages there when it exits (child/write-stage-collector.ts).
  const collector = opts.stagesFile ? ["--import", fileURLToPath(new URL("./child/write-stage-collector.ts", import.meta.url))] : [];
  const child: ChildProcess = spawn(process.execPath, ["--conditions=source", "--import", "tsx", ...collector, "services/annotations-api/src/main.ts"], {
    cwd: REPO,
    env: { PATH: process.env.PATH ?? "", LOG_LEVEL: "warn", PORT: String(port), ...env, ...(opts.stagesFile ? { TETHER_BENCH_STAGES_FILE: opts.stagesFile } : {}) },
    stdio: ["ignore", "ignore", "pipe"],
  });
  let stderr = "";
  child.stderr!.on("data", (d: Buffer) => (stderr = (stderr + d.toString()).slice(-4000)));
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
  const url = `http://127.0.0.1:${port}`;
  const deadline = Date.now() + 60_000;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`the API exited with ${child.exitCode}: ${stderr}`);
    try {
      if ((await fetch(`${url}/healthz`)).status === 200) break;
    } catch {
      // not listening yet
    }
    if (Date.now() > deadline) throw new Error(`the API did not answer /healthz within 60 s: ${stderr}`);
    await new Promise((r) => setTimeout(r, 100));
  }
  return {
    url,
    async stop() {
      if (child.exitCode === null) child.kill("SIGTERM");
      const t = setTimeout(() => child.kill("SIGKILL"), 10_000);
      await exited;
      clearTimeout(t);
    },
  };
}
