import { execFile } from "node:child_process";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createWriter, Drainer, insertJobs, migrate, pausedNames } from "@tether/core/internal";
import { annotationMigrations, annotations } from "@tether/annotations";
import { createTestContext, type TestContext } from "@tether/testkit";

const repoRoot = fileURLToPath(new URL("../..", import.meta.url));

interface RunResult {
  code: number;
  stdout: string;
  stderr: string;
}

describe("tether pause, resume and alerts", () => {
  let ctx: TestContext;
  let drainer: Drainer;
  const writer = createWriter({ graceMs: 0 });

  const run = (args: string[]) =>
    new Promise<RunResult>((resolve) => {
      execFile(
        process.execPath,
        ["--conditions=source", "--import", "tsx", "packages/cli/src/main.ts", ...args],
        {
          cwd: repoRoot,
          env: { PATH: process.env.PATH ?? "", DATABASE_URL: ctx.databaseUrl, ELASTICSEARCH_URL: ctx.elasticsearchUrl, TETHER_INDEX_PREFIX: ctx.indexPrefix },
          timeout: 90_000,
        },
        (err, stdout, stderr) => resolve({ code: err ? Number((err as { code?: unknown }).code ?? -1) : 0, stdout, stderr }),
      );
    });

  beforeAll(async () => {
    ctx = await createTestContext();
    await migrate(ctx.db, [annotationMigrations]);
    await ctx.sink.ensureIndex(annotations.index, annotations.mappings);
    // One drainer for the whole file: pausing and resuming must work without restarting it.
    drainer = new Drainer({ db: ctx.db, sink: ctx.sink, collections: [annotations] });
  });
  afterAll(() => ctx.close());

  it("reports no alert on a fresh queue and exits 0", async () => {
    const r = await run(["alerts", "--json"]);
    expect(r.code, r.stderr).toBe(0);
    const report = JSON.parse(r.stdout) as { firing: boolean; alerts: { name: string; firing: boolean }[] };
    expect(report.firing).toBe(false);
    expect(report.alerts).toHaveLength(8);
  });

  it("pauses a lane by collection name so a running drainer skips it, and resumes it by job name", async () => {
    const paused = await run(["pause", "annotation", "--reason", "elasticsearch upgrade", "--json"]);
    expect(paused.code, paused.stderr).toBe(0);
    expect(JSON.parse(paused.stdout)).toEqual({ paused: "sync_annotation", reason: "elasticsearch upgrade" });
    expect(await pausedNames(ctx.db)).toEqual(["sync_annotation"]);

    await writer.createWithJob(ctx.db, annotations, { userid: "acct:p", target_uri: "https://example.com/p", text: "waits" });
    expect((await drainer.drainOnce()).claimed).toBe(0);

    const resumed = await run(["resume", "sync_annotation"]);
    expect(resumed.code, resumed.stderr).toBe(0);
    expect(resumed.stdout).toContain("resumed lane sync_annotation");
    const pass = await drainer.drainOnce();
    expect(pass).toMatchObject({ claimed: 1, repaired: 1 });
  });

  it("refuses to pause a lane no collection handles unless forced", async () => {
    const r = await run(["pause", "sync_typo"]);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('unknown lane "sync_typo"');
    expect(await pausedNames(ctx.db)).toEqual([]);
    const forced = await run(["pause", "sync_other_app", "--force"]);
    expect(forced.code, forced.stderr).toBe(0);
    expect(await pausedNames(ctx.db)).toEqual(["sync_other_app"]);
  });

  it("exits 1 while an alert fires, names it on stderr and lists what to check", async () => {
    await insertJobs(ctx.db, [{ name: "sync_ghost", entityId: "1", priority: 1, tag: "live", delayMs: 0 }]);
    expect((await drainer.drainOnce()).parked).toBe(1);
    const r = await run(["alerts", "--completion-rate-window", "5"]);
    expect(r.code).toBe(1);
    expect(r.stdout).toMatch(/FIRING\s+parked_jobs/);
    expect(r.stdout).toContain("parked_jobs — check first:");
    expect(r.stderr).toContain("1 alert(s) firing: parked_jobs");
  });
});
