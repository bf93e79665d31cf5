import { sql } from "kysely";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createWriter, databaseNow, latestQueueSample, MAINTENANCE_LOCK, runMaintenance } from "@tether/core/internal";
import { createWidgetContext, widgets, type WidgetContext } from "../support/widgets.js";
import { later } from "./alert-report.js";

describe("maintenance across drainer replicas", () => {
  let ctx: WidgetContext;

  beforeAll(async () => {
    ctx = await createWidgetContext();
  });
  afterAll(() => ctx.close());

  it("is skipped by a replica while another holds the leader lock, and done once it is released", async () => {
    let release!: () => void;
    const held = new Promise<void>((r) => (release = r));
    let locked!: () => void;
    const isLocked = new Promise<void>((r) => (locked = r));
    // Another replica mid-pass: its transaction holds the advisory lock.
    const other = ctx.db.transaction().execute(async (trx) => {
      await sql`SELECT pg_advisory_xact_lock(${MAINTENANCE_LOCK})`.execute(trx);
      locked();
      await held;
    });
    await isLocked;
    const skipped = await runMaintenance(ctx.db, { sampleIntervalMs: 0 });
    expect(skipped).toEqual({ leader: false, prunedStats: 0, prunedSamples: 0 });
    release();
    await other;
    const led = await runMaintenance(ctx.db, { sampleIntervalMs: 0 });
    expect(led.leader).toBe(true);
    expect(led.sample).toBeDefined();
  });

  it("writes at most one queue sample per interval however many replicas try", async () => {
    await createWriter({ graceMs: 60_000 }).createWithJob(ctx.db, widgets, { owner: "m", title: "t" });
    const before = await sql<{ n: string }>`SELECT count(*) AS n FROM tether.queue_sample`.execute(ctx.db);
    const results = await Promise.all(Array.from({ length: 4 }, () => runMaintenance(ctx.db, { sampleIntervalMs: 60_000 })));
    const after = await sql<{ n: string }>`SELECT count(*) AS n FROM tether.queue_sample`.execute(ctx.db);
    // The first test's sample is recent, so nobody samples; a fresh window admits exactly one.
    expect(Number(after.rows[0]!.n)).toBe(Number(before.rows[0]!.n));
    expect(results.every((r) => r.sample === undefined)).toBe(true);
    const now = await databaseNow(ctx.db);
    const fresh = await Promise.all(Array.from({ length: 4 }, () => runMaintenance(ctx.db, { sampleIntervalMs: 60_000, now: later(now, 120_000) })));
    expect(fresh.filter((r) => r.sample !== undefined)).toHaveLength(1);
    const latest = await latestQueueSample(ctx.db);
    expect(latest?.lanes).toEqual([{ name: widgets.jobName, tag: "live", priority: 1, length: 1, due: 1 }]);
    expect(latest?.liveLength).toBe(1);
  });

  it("prunes completion counts and samples past their retention", async () => {
    const now = await databaseNow(ctx.db);
    await sql`INSERT INTO tether.job_stat (at, name, tag, priority, outcome, count)
              VALUES (${later(now, -8 * 86_400_000).toISOString()}::timestamptz, 'sync_widget', 'live', 1, 'repaired', 3),
                     (${later(now, -1 * 86_400_000).toISOString()}::timestamptz, 'sync_widget', 'live', 1, 'repaired', 4)`.execute(ctx.db);
    await sql`INSERT INTO tether.queue_sample (at, live_length, total_length, expired, parked, oldest_due_age_seconds)
              VALUES (${later(now, -2 * 86_400_000).toISOString()}::timestamptz, 0, 0, 0, 0, 0)`.execute(ctx.db);
    const r = await runMaintenance(ctx.db, { statRetentionDays: 7, sampleRetentionMs: 86_400_000 });
    expect(r).toMatchObject({ leader: true, prunedStats: 1, prunedSamples: 1 });
    const stats = await sql<{ count: number }>`SELECT count FROM tether.job_stat`.execute(ctx.db);
    expect(stats.rows.map((x) => x.count)).toEqual([4]);
  });
});
