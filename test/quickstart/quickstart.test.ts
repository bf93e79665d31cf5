import { spawn } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTestContext, freePort, type TestContext } from "@tether/testkit";

const root = fileURLToPath(new URL("../..", import.meta.url));

describe("the quick start", () => {
  let ctx: TestContext;
  beforeAll(async () => {
    ctx = await createTestContext();
  });
  afterAll(() => ctx.close());

  it("runs the API and a drainer against real services, seeds demo annotations and finds them by search", async () => {
    const [port, metricsPort] = [await freePort(), await freePort()];
    const logs = mkdtempSync(join(tmpdir(), "tether-quickstart-logs-"));
    const child = spawn("bash", ["scripts/quickstart", "--smoke"], {
      cwd: root,
      env: {
        ...process.env,
        DATABASE_URL: ctx.databaseUrl,
        ELASTICSEARCH_URL: ctx.elasticsearchUrl,
        TETHER_INDEX_PREFIX: ctx.indexPrefix,
        PORT: String(port),
        METRICS_PORT: String(metricsPort),
        TETHER_QUICKSTART_LOGS: logs,
      },
      stdio: ["ignore", "pipe", "pipe"],
    });
    let out = "";
    child.stdout.on("data", (d: Buffer) => (out += d.toString()));
    child.stderr.on("data", (d: Buffer) => (out += d.toString()));
    const code = await new Promise<number | null>((resolve) => child.on("exit", resolve));
    expect(out).toContain("Tether is running.");
    // Where the console is and how to log in (its page answered 200 in the smoke run).
    expect(out).toContain(`admin console  http://127.0.0.1:${port}/admin/   (log in with the demo operator token: dev-admin-token)`);
    expect(out).toMatch(/quickstart smoke: \d+ demo annotations found by search/);
    expect(code, out.slice(-3000)).toBe(0);
    // The terminal keeps the banner: the services' JSON lines go to the files it names.
    expect(out).toContain(`logs           ${logs}/api.log  ${logs}/drainer.log`);
    expect(out).not.toMatch(/"msg":"request completed"|"level":30/);
    const apiLog = readFileSync(join(logs, "api.log"), "utf8");
    expect(apiLog).toMatch(/"msg":"request completed"/);
    expect(readFileSync(join(logs, "drainer.log"), "utf8")).toMatch(/"msg":"listening"/);
    rmSync(logs, { recursive: true, force: true });
  });
});
