import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { sql } from "kysely";
import { annotations } from "@tether/annotations";
import { createTestContext, startFaultProxy, type TestContext } from "@tether/testkit";
import { runCli } from "./support/run-cli.js";

describe("tether drain --until-empty", () => {
  let ctx: TestContext;
  let ids: string[];
  const run = (args: string[], env: Record<string, string | undefined> = {}) => runCli(ctx, args, env);
  const liveJobs = async () => Number((await sql<{ n: string }>`SELECT count(*) AS n FROM tether.job`.execute(ctx.db)).rows[0]!.n);
  const enqueue = (id: string, name: string, inMs: number) =>
    sql`INSERT INTO tether.job (name, tag, kwargs, scheduled_at)
        VALUES (${name}, 'live', ${JSON.stringify({ id })}::jsonb, now() + ${inMs} * interval '1 millisecond')`.execute(ctx.db);

  beforeAll(async () => {
    ctx = await createTestContext();
    expect((await run(["migrate"])).code).toBe(0);
    const r = await sql<{ id: string }>`
      INSERT INTO annotation (userid, groupid, target_uri, text, created, updated)
      SELECT 'acct:u' || g, 'g', 'https://example.com/' || g, 'text ' || g, now(), now()
      FROM generate_series(1, 8) g RETURNING id`.execute(ctx.db);
    ids = r.rows.map((x) => String(x.id));
  });
  afterAll(() => ctx.close());

  it("keeps going through version conflicts, backoffs and grace periods until the queue is empty", async () => {
    await run(["reindex", "--scope", "all"]);
    expect((await run(["drain", "--until-empty"])).code).toBe(0);
    // Documents deleted behind Tether's back leave delete markers above the rows' versions: the
    // first repair of each is refused as older and retried with a backoff (the case).
    const index = ctx.sink.indexName(annotations.index);
    for (const id of ids.slice(0, 4)) {
      const res = await fetch(`${ctx.elasticsearchUrl}/${index}/_doc/${id}`, { method: "DELETE" });
      expect(res.status).toBe(200);
    }
    const reindexed = await run(["reindex", "--scope", "ids", "--ids", ids.slice(0, 4).join(","), "--priority", "1"]);
    expect(reindexed.code, reindexed.stderr).toBe(0);
    // Two more that only become due a moment later (a grace period).
    await enqueue(ids[5]!, annotations.jobName, 1_500);
    await enqueue(ids[6]!, annotations.jobName, 2_500);

    const r = await run(["drain", "--until-empty", "--json"]);
    expect(r.code, r.stderr).toBe(0);
    const report = JSON.parse(r.stdout);
    expect(report).toMatchObject({ mode: "until-empty", stop: "empty", parked: 0, remaining: { failing: 0, paused: 0, parkedNow: 0 } });
    expect(report.retried).toBeGreaterThanOrEqual(4);
    expect(await liveJobs()).toBe(0);
    const states = await ctx.sink.fetchStates(annotations.index, ids.slice(0, 4));
    expect([...states.values()].every((s) => !s.deleted)).toBe(true);
    expect(states.size).toBe(4);
  });

  it("stops with exit 3 and the counts of paused and parked work, in text and JSON", async () => {
    await sql`DELETE FROM tether.job`.execute(ctx.db);
    expect((await run(["pause", annotations.jobName])).code).toBe(0);
    try {
      await enqueue(ids[0]!, annotations.jobName, 0);
      await enqueue(ids[1]!, annotations.jobName, 0);
      await enqueue(ids[2]!, "sync_nobody_handles", 0);
      const [text, json] = [await run(["drain", "--until-empty"]), await run(["drain", "--until-empty", "--json"])];
      expect(text.code, text.stderr).toBe(3);
      expect(text.stderr).toContain(
        `tether: queue drained except work an operator must unblock: 0 failing or not yet due, 2 in paused lane(s) (${annotations.jobName}), 1 parked by this drain (1 parked in all)`,
      );
      expect(json.code).toBe(3);
      expect(JSON.parse(json.stdout)).toMatchObject({ stop: "empty", exitCode: 3, remaining: { failing: 0, paused: 2, parkedNow: 0, parkedTotal: 1, pausedLanes: [annotations.jobName] } });
    } finally {
      await run(["resume", annotations.jobName]);
    }
  });

  it("gives up with exit 3 after rounds without progress while every write is rejected, naming the failing work", async () => {
    await sql`DELETE FROM tether.job`.execute(ctx.db);
    const [fresh] = (await sql<{ id: string }>`
      INSERT INTO annotation (userid, groupid, target_uri, text, created, updated)
      VALUES ('acct:new', 'g', 'https://example.com/new', 'new', now(), now()) RETURNING id`.execute(ctx.db)).rows;
    await enqueue(String(fresh!.id), annotations.jobName, 0);
    const proxy = await startFaultProxy({ target: ctx.elasticsearchUrl });
    try {
      await proxy.setMode({ kind: "rejectBulkItems", status: 429, fraction: 1 });
      const r = await run(["drain", "--until-empty", "--give-up-after", "2", "--json"], { ELASTICSEARCH_URL: proxy.url });
      expect(r.code, r.stderr).toBe(3);
      expect(r.stderr).toMatch(/tether: drain stopped: 2 round\(s\) made no progress and only work that cannot finish now remains: 1 failing or not yet due, 0 in paused lane\(s\), 0 parked by this drain .*last error: HTTP 429 es_rejected_execution_exception/);
      expect(JSON.parse(r.stdout)).toMatchObject({ stop: "stuck", rounds: 2, exitCode: 3, remaining: { failing: 1 } });
      expect(proxy.stats.bulkItemsRejected).toBe(2);
    } finally {
      await proxy.close();
    }
    expect(await liveJobs()).toBe(1);
  });

  it("stops at --timeout with exit 4 when the next job is due after it, and rejects --timeout with --once", async () => {
    await sql`DELETE FROM tether.job`.execute(ctx.db);
    await enqueue(ids[3]!, annotations.jobName, 3_600_000);
    const [late, once] = await Promise.all([run(["drain", "--until-empty", "--timeout", "2"]), run(["drain", "--once", "--timeout", "2"])]);
    expect(late.code, late.stderr).toBe(4);
    expect(late.stderr).toContain("tether: drain stopped at its --timeout with work left: 1 failing or not yet due, 0 in paused lane(s)");
    expect(await liveJobs()).toBe(1);
    expect(once.code).toBe(2);
    expect(once.stderr).toContain("--timeout and --give-up-after go with --until-empty");
  });
});
