import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { sql } from "kysely";
import { annotations } from "@tether/annotations";
import { traceEntity } from "@tether/core/internal";
import { createTestContext, type TestContext } from "@tether/testkit";
import { runCli } from "./support/run-cli.js";

/** `tether trace`, against real Postgres and the real engine: the console's trace, from the CLI. */
describe("tether trace <collection> <id>", () => {
  let ctx: TestContext;
  let id: string;
  beforeAll(async () => {
    ctx = await createTestContext();
    const migrate = await runCli(ctx, ["migrate", "--json"]);
    expect(migrate.code, migrate.stderr).toBe(0);
    // A row written by plain SQL (no capture): no job, no document until a re-index syncs it.
    const r = await sql<{ id: string }>`INSERT INTO annotation (userid, groupid, target_uri, text) VALUES ('acct:trace', 'g', 'https://example.com/t', 'traced') RETURNING id`.execute(ctx.db);
    id = String(r.rows[0]!.id);
  });
  afterAll(() => ctx.close());

  const trace = async (args: string[] = []) => runCli(ctx, ["trace", "annotation", id, ...args]);

  it("says a row with no document is missing, with no job pending and the re-index that repairs it", async () => {
    const r = await trace();
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toContain(`annotation ${id} (index annotations): missing`);
    expect(r.stdout).toMatch(/postgres: +v\d+, live/);
    expect(r.stdout).toMatch(/downstream: no document/);
    expect(r.stdout).toContain("No job is pending");
    expect(r.stdout).toContain(`repair:     tether reindex --collection annotation --scope ids --ids ${id} (`);
    expect(r.stdout).toContain("pending jobs: none");
  });

  it("--json is the console's trace, the same document core's traceEntity answers; after a re-index and a drain it is in sync, with its history", async () => {
    const pending = JSON.parse((await trace(["--json"])).stdout) as { verdict: string; pendingJobs: unknown[] };
    expect(pending).toMatchObject({ verdict: "missing", pendingJobs: [] });
    expect((await runCli(ctx, ["reindex", "--scope", "ids", "--ids", id])).code).toBe(0);
    const queued = JSON.parse((await trace(["--json"])).stdout) as { pendingJobs: { tag: string }[] };
    expect(queued.pendingJobs).toMatchObject([{ tag: "reindex" }]);
    const drain = await runCli(ctx, ["drain", "--until-empty"]);
    expect(drain.code, drain.stderr).toBe(0);
    const r = await trace(["--json"]);
    expect(r.code, r.stderr).toBe(0);
    const fromCli = JSON.parse(r.stdout) as Record<string, unknown>;
    // The sink of this test context shares the CLI's index prefix: one trace, two readers.
    const inProcess = JSON.parse(JSON.stringify(await traceEntity(ctx.db, ctx.sink, annotations, id))) as Record<string, unknown>;
    expect(fromCli).toEqual(inProcess);
    expect(fromCli).toMatchObject({ collection: "annotation", id, verdict: "in_sync", repair: null, downstream: { exists: true, contentMatches: true }, pendingJobs: [] });
    expect((fromCli.events as { kind: string }[]).map((e) => e.kind)).toContain("enqueued");
    const text = await trace();
    expect(text.stdout).toContain(`annotation ${id} (index annotations): in_sync`);
    expect(text.stdout).toMatch(/downstream: v\d+, live, content matches the row/);
    expect(text.stdout).toContain("events (newest first):");
  });

  it("a document edited in the engine behind Tether's back reads ahead (the engine bumped its version), with the re-index that repairs it", async () => {
    await ctx.raw.update("annotations", id, { text: "edited in the engine" });
    const r = await trace(["--json"]);
    expect(r.code, r.stderr).toBe(0);
    expect(JSON.parse(r.stdout)).toMatchObject({ verdict: "ahead", repair: { force: false }, downstream: { contentMatches: false } });
    expect((await trace()).stdout).toContain("newer than Postgres's");
  });

  it("refuses an unknown collection or a malformed id with exit 2, as JSON under --json", async () => {
    const unknown = await runCli(ctx, ["trace", "nope", id, "--json"]);
    expect(unknown.code).toBe(2);
    expect(JSON.parse(unknown.stdout)).toMatchObject({ error: { code: "usage", message: expect.stringContaining('unknown collection "nope"') } });
    const bad = await runCli(ctx, ["trace", "annotation", "not-a-number", "--json"]);
    expect(bad.code, bad.stdout).toBe(2);
    expect(JSON.parse(bad.stdout)).toMatchObject({ error: { code: "usage", message: expect.stringContaining("annotation id") } });
  });

  it("exits 1 when the engine cannot be asked, printing what it knows", async () => {
    const r = await runCli(ctx, ["trace", "annotation", id, "--json"], { ELASTICSEARCH_URL: "http://127.0.0.1:1" });
    expect(r.code).toBe(1);
    expect(JSON.parse(r.stdout)).toMatchObject({ verdict: "unknown", postgres: { exists: true }, downstream: { reachable: false } });
  });
});
