import { execFile } from "node:child_process";
import { fileURLToPath } from "node:url";
import { sql } from "kysely";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { migrate } from "@tether/core";
import { annotationMigrations } from "@tether/annotations";
import { createTestContext, type TestContext } from "@tether/testkit";

const repoRoot = fileURLToPath(new URL("../../../", import.meta.url));
const mainTs = fileURLToPath(new URL("../src/main.ts", import.meta.url));

describe("tether adopt and tether capture", () => {
  let ctx: TestContext;
  beforeAll(async () => {
    ctx = await createTestContext();
    await migrate(ctx.db, [annotationMigrations]);
    // An application table from before tether: no version column.
    await sql`ALTER TABLE annotation DROP COLUMN version`.execute(ctx.db);
    await sql`INSERT INTO annotation (userid, target_uri) SELECT 'acct:old@example.com', 'https://example.com/' || g FROM generate_series(1, 3000) g`.execute(ctx.db);
  });
  afterAll(() => ctx.close());

  function run(args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
    const env = { ...process.env, DATABASE_URL: ctx.databaseUrl, ELASTICSEARCH_URL: ctx.elasticsearchUrl, TETHER_INDEX_PREFIX: ctx.indexPrefix, LOG_LEVEL: "warn" };
    return new Promise((resolve) => {
      execFile(process.execPath, ["--conditions=source", "--import", "tsx", mainTs, ...args], { cwd: repoRoot, env, timeout: 90_000 }, (err, stdout, stderr) => {
        resolve({ code: err ? Number((err as { code?: unknown }).code ?? -1) : 0, stdout, stderr });
      });
    });
  }

  it("adopt adds the version column by backfill, installs capture, enqueues the initial sync and reports progress as plain lines", async () => {
    const r = await run(["adopt", "annotation", "--strategy", "backfill", "--batch-size", "500", "--capture"]);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toMatch(/version column: backfill \(3000 rows backfilled\)/);
    expect(r.stdout).toMatch(/initial sync: 3000 job\(s\) enqueued/);
    // stderr is not a terminal here: the progress bar degrades to plain lines.
    expect(r.stderr).toMatch(/backfilling versions \[[=-]+\] \d+\/3000/);
    expect(r.stderr.includes("\u001b[")).toBe(false);
    const jobs = await sql<{ n: string }>`SELECT count(*) AS n FROM tether.job WHERE tag = 'reindex-adopt'`.execute(ctx.db);
    expect(Number(jobs.rows[0]!.n)).toBe(3000);

    const again = JSON.parse((await run(["adopt", "annotation", "--json", "--no-enqueue"])).stdout);
    expect(again).toMatchObject({ collection: "annotation", version: "present", backfilled: 0, enqueued: 0 });
  });

  it("capture status, disable and enable answer in JSON; --sql prints the migration text", async () => {
    const status = JSON.parse((await run(["capture", "status", "--json"])).stdout);
    expect(status).toEqual([expect.objectContaining({ collection: "annotation", enabled: true })]);
    const off = JSON.parse((await run(["capture", "disable", "annotation", "--json"])).stdout);
    expect(off).toMatchObject({ enabled: false, triggers: [], functions: [] });
    const text = await run(["capture", "enable", "annotation", "--sql", "--grace-ms", "0", "--tag", "psql"]);
    expect(text.stdout).toMatch(/CREATE TRIGGER "tether_capture_annotation_upd" AFTER UPDATE ON "annotation"/);
    expect(text.stdout).toMatch(/'psql'/);
    expect(text.stdout).toMatch(/pg_notify\('tether_wake'/);
    expect(JSON.parse((await run(["capture", "status", "annotation", "--json"])).stdout)[0].enabled).toBe(false);
    const on = await run(["capture", "enable", "annotation", "--priority", "5", "--json"]);
    expect(JSON.parse(on.stdout).enabled).toBe(true);
    await sql`UPDATE annotation SET text = 'psql' WHERE id = 1`.execute(ctx.db);
    const captured = await sql<{ priority: number }>`SELECT priority FROM tether.job WHERE tag = 'capture'`.execute(ctx.db);
    expect(captured.rows).toEqual([{ priority: 5 }]);
  });

  it("capture enable and status cover the tables the documents embed: each with its triggers, in plain lines and in JSON", async () => {
    const triggers = ["tether_embed_annotation_author_del", "tether_embed_annotation_author_ins", "tether_embed_annotation_author_upd"];
    const enabled = await run(["capture", "enable", "annotation"]);
    expect(enabled.code, enabled.stderr).toBe(0);
    expect(enabled.stdout.split("\n")).toContain(`  embedded table annotation_user (author): enabled (triggers: ${triggers.join(", ")})`);
    const status = await run(["capture", "status"]);
    expect(status.stdout.trim().split("\n")).toEqual(["annotation: capture enabled", `  embedded table annotation_user (author): enabled (triggers: ${triggers.join(", ")})`]);
    const json = JSON.parse((await run(["capture", "status", "annotation", "--json"])).stdout);
    expect(json).toEqual([expect.objectContaining({ collection: "annotation", enabled: true, embeds: [{ embed: "author", table: "annotation_user", triggers, enabled: true }] })]);

    // An embedded table's trigger gone: the collection's capture is partial, and the line says which table lacks what.
    await sql`DROP TRIGGER tether_embed_annotation_author_upd ON annotation_user`.execute(ctx.db);
    const partial = await run(["capture", "status"]);
    expect(partial.stdout.trim().split("\n")).toEqual([
      expect.stringMatching(/^annotation: capture partial \(/),
      "  embedded table annotation_user (author): partial (triggers: tether_embed_annotation_author_del, tether_embed_annotation_author_ins)",
    ]);
    const off = await run(["capture", "disable", "annotation", "--json"]);
    expect(JSON.parse(off.stdout)).toMatchObject({ enabled: false, triggers: [], embeds: [{ embed: "author", table: "annotation_user", triggers: [], enabled: false }] });
    expect((await run(["capture", "status"])).stdout.trim().split("\n")).toEqual(["annotation: capture disabled", "  embedded table annotation_user (author): disabled"]);
  });

  it("refuses an unknown collection and a bad strategy with exit 2", async () => {
    const unknown = await run(["capture", "enable", "nope"]);
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toMatch(/unknown collection "nope"/);
    const bad = await run(["adopt", "annotation", "--strategy", "quick"]);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toMatch(/--strategy must be "fast-default" or "backfill"/);
  });
});
