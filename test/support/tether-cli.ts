import { execFile } from "node:child_process";
import { fileURLToPath } from "node:url";

const REPO = fileURLToPath(new URL("../..", import.meta.url));

export interface CliRun {
  code: number;
  stdout: string;
  stderr: string;
}

/**
 * Runs `tether <args>` as an operator does, from this checkout (its tether.config.ts), with
 * `env` over this process's environment; resolves with the exit code and everything printed.
 */
export function runTether(args: string[], env: Record<string, string>, timeoutMs = 120_000): Promise<CliRun> {
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      ["--conditions=source", "--import", "tsx", "packages/cli/src/main.ts", ...args],
      { cwd: REPO, env: { ...process.env, LOG_LEVEL: "warn", ...env }, timeout: timeoutMs },
      (err, stdout, stderr) => resolve({ code: err ? Number((err as { code?: unknown }).code ?? -1) : 0, stdout, stderr }),
    );
  });
}
