import { execFile } from "node:child_process";
import { fileURLToPath } from "node:url";
import { spawnService, type ServiceKind, type ServiceProcess } from "../../scenarios/support/processes.js";

const repoRoot = fileURLToPath(new URL("../../../", import.meta.url));
const cliMain = fileURLToPath(new URL("../../../packages/cli/src/main.ts", import.meta.url));

export interface CliRun {
  code: number;
  stdout: string;
  stderr: string;
}

/**
 * Runs processes and keeps everything they print or serve, so a test can look for secrets in
 * all of it at the end: each CLI run's stdout and stderr, each service's log lines, and any
 * answer a test fetched from them.
 */
export class CapturedOutput {
  readonly texts: { what: string; text: string }[] = [];
  private readonly services: ServiceProcess[] = [];

  keep(what: string, text: string): string {
    this.texts.push({ what, text });
    return text;
  }

  cli(args: string[], env: Record<string, string>): Promise<CliRun> {
    return new Promise((resolve) => {
      execFile(process.execPath, ["--conditions=source", "--import", "tsx", cliMain, ...args], { cwd: repoRoot, env: { PATH: process.env.PATH ?? "", HOME: process.env.HOME ?? "", LOG_LEVEL: "info", ...env }, timeout: 180_000 }, (err, stdout, stderr) => {
        const code = err ? (typeof (err as { code?: unknown }).code === "number" ? (err as { code: number }).code : -1) : 0;
        this.keep(`tether ${args.join(" ")} (stdout)`, stdout);
        this.keep(`tether ${args.join(" ")} (stderr)`, stderr);
        resolve({ code, stdout, stderr });
      });
    });
  }

  async service(kind: ServiceKind, env: Record<string, string>): Promise<ServiceProcess> {
    // Every line the service printed, not only the newest: the scan reads all of them.
    const p = await spawnService(kind, env, { keepLines: Infinity });
    this.services.push(p);
    return p;
  }

  /** GETs a path of a service and keeps the answer. */
  async fetch(url: string, init?: RequestInit): Promise<{ status: number; text: string }> {
    const res = await fetch(url, init);
    const text = this.keep(`${init?.method ?? "GET"} ${url}`, await res.text());
    return { status: res.status, text };
  }

  /** Stops every service and keeps its log lines. */
  async stopAll(): Promise<void> {
    for (const p of this.services.splice(0)) {
      await p.stop(10_000);
      this.keep(`${p.kind} log`, p.logs.join("\n"));
    }
  }

  /** Every kept text that contains one of `secrets`, with which. */
  leaks(secrets: readonly string[]): string[] {
    return this.texts.flatMap((t) => secrets.filter((s) => t.text.includes(s)).map((s) => `${t.what} contains the secret ${s.slice(0, 4)}…`));
  }
}
