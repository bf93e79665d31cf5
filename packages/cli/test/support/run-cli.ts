import { execFile } from "node:child_process";
import { fileURLToPath } from "node:url";
import type { TestContext } from "@tether/testkit";

const repoRoot = fileURLToPath(new URL("../../../../", import.meta.url));
const mainTs = fileURLToPath(new URL("../../src/main.ts", import.meta.url));

export interface RunResult {
  code: number;
  stdout: string;
  stderr: string;
}

/** Runs `tether <args>` from source as a child process (stdout and stderr are pipes, not TTYs). */
export function runCli(ctx: Pick<TestContext<any>, "databaseUrl" | "elasticsearchUrl" | "indexPrefix">, args: string[], env: Record<string, string | undefined> = {}): Promise<RunResult> {
  const base: Record<string, string | undefined> = {
    ...process.env,
    DATABASE_URL: ctx.databaseUrl,
    ELASTICSEARCH_URL: ctx.elasticsearchUrl,
    TETHER_INDEX_PREFIX: ctx.indexPrefix,
    LOG_LEVEL: "warn",
  };
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      ["--conditions=source", "--import", "tsx", mainTs, ...args],
      { cwd: repoRoot, env: { ...base, ...env } as NodeJS.ProcessEnv, timeout: 120_000 },
      (err, stdout, stderr) => {
        const code = err ? (typeof (err as { code?: unknown }).code === "number" ? (err as { code: number }).code : -1) : 0;
        resolve({ code, stdout, stderr });
      },
    );
  });
}
