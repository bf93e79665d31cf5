import { sql } from "kysely";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { enqueueReindex, migrate } from "@tether/core";
import { annotationMigrations, annotations } from "@tether/annotations";
import { createTestContext, waitFor, type TestContext } from "@tether/testkit";
import { spawnDrainer, type DrainerProcess } from "./drainer-process.js";

const JOBS = 1500;

describe("the drainer process on SIGTERM", () => {
  let ctx: TestContext;
  let proc: DrainerProcess | undefined;

  beforeAll(async () => {
    ctx = await createTestContext();
    await migrate(ctx.db, [annotationMigrations]);
    await sql`INSERT INTO annotation (userid, target_uri, text)
              SELECT 'acct:sig', 'https://example.com/' || g, 'text ' || g FROM generate_series(1, ${JOBS}) g`.execute(ctx.db);
    await enqueueReindex(ctx.db, annotations, { scope: "all" });
  });

  afterAll(async () => {
    proc?.kill();
    await ctx?.close();
  });

  it("finishes the batch in hand, exits 0 and leaves no job claimed (printing its spans when asked)", async () => {
    proc = await spawnDrainer({
      DATABASE_URL: ctx.databaseUrl,
      ELASTICSEARCH_URL: ctx.elasticsearchUrl,
      TETHER_INDEX_PREFIX: ctx.indexPrefix,
      // Small full batches run back to back, so the signal lands while the loop is busy.
      TETHER_BATCH_SIZE: "100",
      TETHER_DRAIN_INTERVAL_MS: "60000",
      OTEL_TRACES_EXPORTER: "console",
    });
    await proc.waitForLog((l) => l.msg === "drain pass" && Number((l.pass as { claimed: number }).claimed) > 0);
    proc.child.kill("SIGTERM");
    const code = await proc.exited;
    expect(code).toBe(0);
    expect(proc.logs.some((l) => l.msg === "stopped")).toBe(true);
    expect(proc.logs.some((l) => l.msg === "drain pass failed")).toBe(false);
    // OTEL_TRACES_EXPORTER=console prints each pass's span.
    expect(proc.logs.some((l) => typeof l.raw === "string" && l.raw.includes("tether.drain_batch"))).toBe(true);

    // Nothing is locked: every remaining job can be claimed at once, without waiting.
    const remaining = await sql<{ n: string }>`SELECT count(*) AS n FROM tether.job`.execute(ctx.db);
    const claimable = await ctx.db.transaction().execute(async (trx) => {
      const r = await sql<{ id: string }>`SELECT id FROM tether.job FOR UPDATE NOWAIT`.execute(trx);
      return r.rows.length;
    });
    expect(claimable).toBe(Number(remaining.rows[0]!.n));
    // It stopped after the batch in hand rather than draining the queue first.
    expect(claimable).toBeGreaterThan(0);
    // Its sessions end with it: Postgres removes a backend once it has read the process's
    // goodbye, a moment after the exit (awaited, not sampled once: a busy machine shows the gap).
    const sessions = async () => Number((await sql<{ n: string }>`SELECT count(*) AS n FROM pg_stat_activity WHERE application_name = 'tether-drainer' AND datname = current_database()`.execute(ctx.db)).rows[0]!.n);
    await waitFor(async () => (await sessions()) === 0, { what: "the drainer's Postgres sessions to end", timeoutMs: 60_000 });

    // It reported itself to the console while it ran, and marked itself stopped on the way out.
    const hb = await sql<{ pid: number; version: string; passes: string; stopped: boolean }>`
      SELECT pid, version, passes, stopped_at IS NOT NULL AS stopped FROM tether.drainer_heartbeat`.execute(ctx.db);
    expect(hb.rows).toEqual([{ pid: proc.child.pid, version: "0.1.0", passes: expect.any(String), stopped: true }]);
    expect(Number(hb.rows[0]!.passes)).toBeGreaterThan(0);

    // Every job that left the queue was confirmed: completions add up with what remains.
    const done = await sql<{ n: string | null }>`SELECT sum(count) AS n FROM tether.job_stat`.execute(ctx.db);
    expect(Number(done.rows[0]!.n ?? 0) + claimable).toBe(JOBS);
    const passes = proc.logs.filter((l) => l.msg === "drain pass").map((l) => l.pass as { claimed: number; forced: number; repaired: number; retried: number });
    expect(passes.every((p) => p.claimed === p.repaired + p.retried)).toBe(true);
  });
});
