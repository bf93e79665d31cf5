import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { sql } from "kysely";
import { annotations } from "@tether/annotations";
import { createTestContext, type TestContext } from "@tether/testkit";
import { runCli, type RunResult } from "./support/run-cli.js";


describe("the tether CLI, run as a child process", () => {
  let ctx: TestContext;
  beforeAll(async () => {
    ctx = await createTestContext();
  });
  afterAll(() => ctx.close());

  const run = (args: string[], env: Record<string, string | undefined> = {}) => runCli(ctx, args, env);
  const json = (r: RunResult) => {
    expect(r.code, r.stderr).toBe(0);
    return JSON.parse(r.stdout);
  };
  const jobs = async () =>
    (await sql<{ priority: number; tag: string; kwargs: { id: string; force?: boolean }; attempts: number }>`
      SELECT priority, tag, kwargs, attempts FROM tether.job ORDER BY id`.execute(ctx.db)).rows;
  const clearJobs = () => sql`DELETE FROM tether.job`.execute(ctx.db);

  it("migrate applies the annotation schema once, in text and in JSON", async () => {
    const first = await run(["migrate", "--json"]);
    expect(json(first).applied).toContainEqual({ namespace: "annotations", id: 1, name: "annotation" });
    // A row written before tether (no capture here): migrate raises the version sequence above it.
    await sql`INSERT INTO annotation (userid, groupid, target_uri, version) VALUES ('acct:legacy', 'g', 'https://example.com/legacy', 5000)`.execute(ctx.db);
    const again = await run(["migrate"]);
    expect(again.code).toBe(0);
    expect(again.stdout).toContain("schema is up to date");
    const floor = await sql<{ v: string }>`SELECT last_value::text AS v FROM tether.version_seq`.execute(ctx.db);
    expect(Number(floor.rows[0]!.v)).toBe(5000);
    await sql`DELETE FROM annotation WHERE userid = 'acct:legacy'`.execute(ctx.db);
  });

  describe("with annotations in Postgres", () => {
    let ids: string[];
    beforeAll(async () => {
      const r = await sql<{ id: string }>`
        INSERT INTO annotation (userid, groupid, target_uri, text, created, updated)
        SELECT 'acct:u' || (g % 3), 'g' || (g % 2), 'https://example.com/' || g, 'text ' || g,
               timestamptz '2026-01-01' + g * interval '1 day', timestamptz '2026-01-01' + g * interval '1 day'
        FROM generate_series(1, 12) g RETURNING id`.execute(ctx.db);
      ids = r.rows.map((x) => String(x.id));
    });

    it("reindex enqueues by user, by date range and by ids with the route's defaults and options", async () => {
      await clearJobs();
      expect(json(await run(["reindex", "--scope", "user", "--value", "acct:u1", "--json"]))).toEqual({ enqueued: 4, priority: 100, tag: "reindex" });
      expect(json(await run(["reindex", "--scope", "updated", "--from", "2026-01-02", "--to", "2026-01-04", "--json"]))).toEqual({ enqueued: 2, priority: 1000, tag: "reindex" });
      const byIds = await run(["reindex", "--scope", "ids", "--ids", `${ids[0]},${ids[1]}`, "--ids", ids[2]!, "--force", "--priority", "7", "--tag", "reindex-cli"]);
      expect(byIds.code, byIds.stderr).toBe(0);
      expect(byIds.stdout).toContain("enqueued 3 job(s) at priority 7 with tag reindex-cli");
      const all = await jobs();
      expect(all).toHaveLength(9);
      expect(all.filter((j) => j.priority === 100)).toHaveLength(4);
      expect(all.filter((j) => j.priority === 1000)).toHaveLength(2);
      const forced = all.filter((j) => j.tag === "reindex-cli");
      expect(forced.map((j) => j.kwargs.id).sort()).toEqual(ids.slice(0, 3).sort());
      for (const j of forced) expect(j.kwargs.force).toBe(true);
    });

    it("reindex fails with exit 1 for an unknown user and exit 2 for bad usage, enqueuing nothing", async () => {
      await clearJobs();
      const unknown = await run(["reindex", "--scope", "user", "--value", "acct:nobody", "--json"]);
      expect(unknown.code).toBe(1);
      expect(unknown.stderr).toContain('annotation with userid = "acct:nobody" not found');
      expect(JSON.parse(unknown.stdout)).toEqual({ error: { code: "failed", message: expect.stringContaining("acct:nobody"), exitCode: 1 } });
      const usage = [["reindex"], ["reindex", "--scope", "planet"], ["reindex", "--scope", "ids", "--ids", "1;DROP TABLE annotation"]];
      const [injected, ...bad] = await Promise.all([run(["reindex", "--scope", "user", "--value", "x' OR '1'='1"]), ...usage.map((args) => run(args))]);
      bad.forEach((r, i) => {
        expect(r.code, usage[i]!.join(" ")).toBe(2);
        expect(r.stderr.length, usage[i]!.join(" ")).toBeGreaterThan(0);
      });
      // Compared as a value, never spliced into SQL: it matches no user.
      expect(injected.code).toBe(1);
      expect(await jobs()).toEqual([]);
      const n = await sql<{ n: string }>`SELECT count(*) AS n FROM annotation`.execute(ctx.db);
      expect(n.rows[0]!.n).toBe("12");
    });

    it("status reports the queue as JSON and as tables", async () => {
      await clearJobs();
      await run(["reindex", "--scope", "group", "--value", "g0"]);
      const [sj, text] = await Promise.all([run(["status", "--json"]), run(["status"])]);
      const s = json(sj);
      expect(s).toMatchObject({ total: 6, due: 6, future: 0, expired: 0, parked: 0 });
      expect(s.byTag).toEqual([{ tag: "reindex", total: 6, due: 6, future: 0, expired: 0, dead: { parked: 0, expired: 0 } }]);
      expect(text.code).toBe(0);
      expect(text.stdout).toMatch(/^NAME\s+TOTAL\s+DUE/m);
      expect(text.stdout).toMatch(/^sync_annotation\s+6\s+6\s/m);
    });

    it("drain --once and --until-empty verify and repair every due job, printing counts by outcome", async () => {
      await clearJobs();
      await run(["reindex", "--scope", "all"]);
      const once = json(await run(["drain", "--once", "--batch-size", "5", "--json"]));
      expect(once).toMatchObject({ mode: "once", passes: 1, claimed: 5, repaired: 5, parked: 0, retried: 0 });
      const rest = await run(["drain", "--until-empty", "--batch-size", "5"]);
      expect(rest.code, rest.stderr).toBe(0);
      expect(rest.stdout).toMatch(/drained 7 job\(s\) in \d+ pass\(es\).*repaired 7/);
      // Not --json, stderr not a terminal: plain progress lines, no bar glyphs.
      expect(rest.stderr).toMatch(/^draining: 7\/7 jobs done, 7 repaired, 0 parked, 0 retried$/m);
      expect(rest.stderr).not.toContain("[");
      expect(await jobs()).toEqual([]);
      const states = await ctx.sink.fetchStates(annotations.index, ids);
      expect(states.size).toBe(12);
    });

    it("drain fails with exit 1 naming Elasticsearch and its address (password masked) when it is unreachable, and exits 2 without exactly one mode", async () => {
      await clearJobs();
      await sql`INSERT INTO tether.job (name, tag, kwargs) VALUES (${annotations.jobName}, 'live', ${JSON.stringify({ id: ids[0] })}::jsonb)`.execute(ctx.db);
      const [down, neither, both] = await Promise.all([
        run(["drain", "--until-empty", "--json"], { ELASTICSEARCH_URL: "http://elastic:hunter2@127.0.0.1:1" }),
        run(["drain"]),
        run(["drain", "--once", "--until-empty"]),
      ]);
      expect(down.code, down.stderr).toBe(1);
      expect(down.stderr).toContain("tether: cannot reach Elasticsearch at http://elastic:***@127.0.0.1:1/: ");
      expect(down.stderr + down.stdout).not.toContain("hunter2");
      expect(JSON.parse(down.stdout)).toEqual({ error: { code: "elasticsearch_unreachable", message: expect.stringContaining("http://elastic:***@127.0.0.1:1/"), exitCode: 1 } });
      expect(await jobs()).toHaveLength(1);
      expect(neither.code).toBe(2);
      expect(both.code).toBe(2);
    });
  });

  describe("parked list and retry", () => {
    beforeAll(async () => {
      await sql`DELETE FROM tether.job`.execute(ctx.db);
      await sql`
        INSERT INTO tether.dead_job (job_id, name, enqueued_at, scheduled_at, expires_at, priority, tag, kwargs, attempts, last_error, reason, dead_at) VALUES
          (1, 'sync_annotation', now(), now(), now(), 1,    'live',    '{"id":"101"}', 5, 'mapper_parsing_exception: bad', 'parked',  now() - interval '3 minutes'),
          (2, 'sync_annotation', now(), now(), now(), 1,    'live',    '{"id":"102"}', 5, 'mapper_parsing_exception: bad', 'parked',  now() - interval '2 minutes'),
          (3, 'sync_widget',     now(), now(), now(), 1000, 'reindex', '{"id":"103"}', 0, NULL,                            'expired', now() - interval '1 minute')`.execute(ctx.db);
    });

    it("list shows dead-letter jobs newest first, filtered by reason and limited", async () => {
      const [allRun, parkedRun, text, lost] = await Promise.all([
        run(["parked", "list", "--json"]),
        run(["parked", "list", "--reason", "parked", "--limit", "1", "--json"]),
        run(["parked", "list"]),
        run(["parked", "list", "--reason", "lost"]),
      ]);
      const all = json(allRun);
      expect(all.total).toBe(3);
      expect(all.jobs.map((j: { kwargs: { id: string } }) => j.kwargs.id)).toEqual(["103", "102", "101"]);
      const parked = json(parkedRun);
      expect(parked.total).toBe(2);
      expect(parked.jobs).toHaveLength(1);
      expect(parked.jobs[0]).toMatchObject({ reason: "parked", name: "sync_annotation", lastError: "mapper_parsing_exception: bad", attempts: 5 });
      expect(text.stdout).toMatch(/^ID\s+NAME\s+ENTITY/m);
      expect(text.stdout).toContain("3 of 3 shown");
      expect(lost.code).toBe(2);
    });

    it("retry moves chosen jobs back into the queue with attempts reset and a fresh expiry", async () => {
      const newestParked = await sql<{ id: string }>`SELECT id FROM tether.dead_job WHERE reason = 'parked' ORDER BY dead_at DESC LIMIT 1`.execute(ctx.db);
      const oneId = String(newestParked.rows[0]!.id);
      expect(json(await run(["parked", "retry", "--ids", oneId, "--json"]))).toEqual({ retried: 1 });
      const back = await sql<{ kwargs: { id: string }; attempts: number; due: boolean; fresh: boolean }>`
        SELECT kwargs, attempts, scheduled_at <= now() AS due, expires_at > now() + interval '29 days' AS fresh FROM tether.job`.execute(ctx.db);
      expect(back.rows).toEqual([{ kwargs: { id: "102" }, attempts: 0, due: true, fresh: true }]);

      expect(json(await run(["parked", "retry", "--all", "--name", "sync_widget", "--json"]))).toEqual({ retried: 1 });
      const left = json(await run(["parked", "list", "--json"]));
      expect(left.jobs.map((j: { kwargs: { id: string } }) => j.kwargs.id)).toEqual(["101"]);
      const [neither, badId] = await Promise.all([run(["parked", "retry"]), run(["parked", "retry", "--ids", "abc"])]);
      expect(neither.code).toBe(2);
      expect(badId.code).toBe(2);
    });
  });

  it("exits 2 for an unknown verb or a missing DATABASE_URL, and 1 naming Postgres when it is unreachable, as JSON under --json", async () => {
    const [unknown, noDb, deadDb, unknownJson] = await Promise.all([
      run(["frobnicate"]),
      run(["status"], { DATABASE_URL: "" }),
      run(["status", "--json"], { DATABASE_URL: "postgres://postgres:hunter2@127.0.0.1:1/nowhere" }),
      run(["status", "--frobnicate", "--json"]),
    ]);
    expect(deadDb.stderr).toContain("tether: cannot connect to Postgres at postgres://postgres:***@127.0.0.1:1/nowhere: ");
    expect(JSON.parse(deadDb.stdout)).toEqual({ error: { code: "postgres_unreachable", message: expect.stringContaining("postgres:***@127.0.0.1:1/nowhere"), exitCode: 1 } });
    expect(deadDb.stderr + deadDb.stdout).not.toContain("hunter2");
    expect(unknownJson.code).toBe(2);
    expect(JSON.parse(unknownJson.stdout)).toEqual({ error: { code: "usage", message: expect.stringContaining("unknown option '--frobnicate'"), exitCode: 2 } });
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toContain("unknown command");
    expect(noDb.code).toBe(2);
    expect(noDb.stderr).toContain("DATABASE_URL is not set");
    expect(deadDb.code).toBe(1);
  });

  it("prints its version, and tells to run migrate first when the schema is missing", async () => {
    const bare = `${ctx.databaseUrl}_bare`;
    await sql`CREATE DATABASE ${sql.id(bare.slice(bare.lastIndexOf("/") + 1))}`.execute(ctx.db);
    try {
      const [version, status, drain] = await Promise.all([run(["--version"]), run(["status"], { DATABASE_URL: bare }), run(["drain", "--once", "--json"], { DATABASE_URL: bare })]);
      expect(version.code).toBe(0);
      expect(version.stdout.trim()).toMatch(/^\d+\.\d+\.\d+/);
      expect(status.code).toBe(1);
      expect(status.stderr).toContain("the tether schema is missing in Postgres at postgres://");
      expect(status.stderr).toContain("run `tether migrate` first");
      expect(JSON.parse(drain.stdout).error).toMatchObject({ code: "schema_missing", exitCode: 1 });
    } finally {
      await sql`DROP DATABASE IF EXISTS ${sql.id(bare.slice(bare.lastIndexOf("/") + 1))} WITH (FORCE)`.execute(ctx.db);
    }
  });
});
