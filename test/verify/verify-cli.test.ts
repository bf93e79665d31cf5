import { execFile } from "node:child_process";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { sql } from "kysely";
import { scheduledRunStates } from "@tether/core/internal";
import type { EngineSink } from "@tether/search-sink";
import type { TestContext } from "@tether/testkit";
import { annotations, createAnnotationContext, insertRawAnnotations } from "../scenarios/support/annotation-context.js";

const repoRoot = fileURLToPath(new URL("../..", import.meta.url));
const mainTs = "packages/cli/src/main.ts";

interface RunResult {
  code: number;
  stdout: string;
  stderr: string;
}

// Runs once per sink (the vitest projects): the CLI picks it from TETHER_SINK.
describe("tether verify and drain, run as child processes", () => {
  let ctx: TestContext<EngineSink>;
  beforeAll(async () => {
    ctx = await createAnnotationContext({ sink: "per-project" });
    await insertRawAnnotations(ctx.db, 250);
  });
  afterAll(() => ctx.close());

  const firstId = async () => (await sql<{ id: string }>`SELECT min(id)::text AS id FROM annotation`.execute(ctx.db)).rows[0]!.id;

  const run = (args: string[]): Promise<RunResult> =>
    new Promise((resolve) => {
      execFile(
        process.execPath,
        ["--conditions=source", "--import", "tsx", mainTs, ...args],
        {
          cwd: repoRoot,
          env: { ...process.env, DATABASE_URL: ctx.databaseUrl, ...ctx.serviceEnv(), TETHER_INDEX_PREFIX: ctx.indexPrefix, LOG_LEVEL: "warn" },
          timeout: 90_000,
        },
        (err, stdout, stderr) => resolve({ code: err ? Number((err as { code?: unknown }).code ?? -1) : 0, stdout, stderr }),
      );
    });

  it("reports rows a migration wrote behind tether's back as JSON, enqueues their repair, and fails only when asked to", async () => {
    const r = await run(["verify", "--collection", "annotation", "--bucket-size", "100", "--json"]);
    expect(r.code, r.stderr).toBe(0);
    const report = JSON.parse(r.stdout) as { driftedTotal: number; enqueued: number; collections: { collection: string; drifted: Record<string, number> }[] };
    expect(report).toMatchObject({ driftedTotal: 250, enqueued: 250 });
    expect(report.collections[0]).toMatchObject({ collection: "annotation", drifted: { missing: 250, stale: 0, ghost: 0, deleted_live: 0, embedded: 0 } });
    const queued = await sql<{ n: string }>`SELECT count(*) AS n FROM tether.job WHERE tag = 'verify' AND priority = 500`.execute(ctx.db);
    expect(Number(queued.rows[0]!.n)).toBe(250);

    const strict = await run(["verify", "--no-enqueue", "--fail-on-drift"]);
    expect(strict.code).toBe(1);
    expect(strict.stdout).toContain("drifted 250: missing 250");
    expect(strict.stderr).toContain("250 drifted entities found");
    // The progress bar goes to stderr, never into the report.
    expect(strict.stderr).toContain("verifying annotation");

    const drained = await run(["drain", "--until-empty", "--json"]);
    expect(drained.code, drained.stderr).toBe(0);
    expect(await ctx.sink.fetchStates(annotations.index, [String(await firstId())])).toHaveProperty("size", 1);
    const clean = await run(["verify", "--fail-on-drift"]);
    expect(clean.code, clean.stderr).toBe(0);
    expect(clean.stdout).toContain("no drift");

    // Each whole-collection run typed here is recorded as the schedule's are (trigger cli): the
    // completed clean one is the collection's last fast run, so the schedule's interval and the
    // overdue alert count from it, and `tether status` shows it.
    const runs = await sql<{ started_by: string; mode: string; status: string; drifted_total: number; documents_compared: string }>`
      SELECT started_by, mode, status, drifted_total, documents_compared::text FROM tether.verify_run ORDER BY id`.execute(ctx.db);
    expect(runs.rows.map(({ started_by, ...r }) => ({ cli: started_by.startsWith("cli:"), ...r }))).toEqual([
      { cli: true, mode: "fast", status: "done", drifted_total: 250, documents_compared: "250" },
      { cli: true, mode: "fast", status: "done", drifted_total: 250, documents_compared: "250" },
      { cli: true, mode: "fast", status: "done", drifted_total: 0, documents_compared: "250" },
    ]);
    const { states } = await scheduledRunStates(ctx.db, "fast");
    const last = await sql<{ finished_at: Date }>`SELECT finished_at FROM tether.verify_run ORDER BY id DESC LIMIT 1`.execute(ctx.db);
    expect(states.get("annotation")?.lastDoneAt).toEqual(last.rows[0]!.finished_at);
    const status = await run(["status", "--json"]);
    expect(status.code, status.stderr).toBe(0);
    const verify = (JSON.parse(status.stdout) as { verify: { collection: string; mode: string; lastDone?: { trigger: string; driftedTotal: number } }[] }).verify;
    expect(verify).toEqual([expect.objectContaining({ collection: "annotation", mode: "fast", lastDone: expect.objectContaining({ trigger: "cli", driftedTotal: 0 }) })]);
    const alerts = await run(["alerts", "--json"]);
    const overdue = (JSON.parse(alerts.stdout) as { alerts: { name: string; firing: boolean }[] }).alerts.find((a) => a.name === "verify_overdue");
    expect(overdue).toMatchObject({ firing: false });
  });

  it("rejects an unknown collection as a usage error", async () => {
    const r = await run(["verify", "--collection", "nope"]);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('unknown collection "nope"');
  });
});
