import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { sql } from "kysely";
import { createWriter, databaseNow, defineCollection, Drainer, evaluateAlerts, retryDeadJobs, type AlertThresholds, type DrainResult } from "@tether/core/internal";
import { createWidgetContext, widgets, type WidgetContext, type WidgetRow } from "../support/widgets.js";
import { alertOf, later } from "./alert-report.js";

// A document builder that puts a string into a field mapped as long: Elasticsearch rejects the
// item with a mapping error (400) unless the title happens to be a number.
const counters = defineCollection<WidgetRow>({
  name: "widget_count",
  table: "widget",
  index: "widget_counts",
  toDocument: (r) => ({ owner: r.owner, count: r.title }),
  mappings: { properties: { owner: { type: "keyword" }, count: { type: "long" } } },
});

const thresholds: AlertThresholds = {};

describe("the expired-jobs and parked-jobs alerts", () => {
  let ctx: WidgetContext;
  let drainer: Drainer;
  const writer = createWriter({ graceMs: 0 });

  beforeAll(async () => {
    ctx = await createWidgetContext();
    await ctx.sink.ensureIndex(counters.index, counters.mappings);
    drainer = new Drainer({ db: ctx.db, sink: ctx.sink, collections: [widgets, counters], maxAttempts: 2, backoff: { baseMs: 1, maxMs: 1 } });
  });
  afterAll(() => ctx.close());

  it("fires the expired alert once the sweep moves a job past its expiry", async () => {
    await writer.createWithJob(ctx.db, widgets, { owner: "exp", title: "late" });
    expect(alertOf(await evaluateAlerts(ctx.db, thresholds), "expired_jobs").firing).toBe(false);
    // A pass 31 days later: the job's 30-day lifetime is over before any drainer took it.
    const now = await databaseNow(ctx.db);
    const pass = await drainer.drainOnce({ now: later(now, 31 * 86_400_000) });
    expect(pass.expired).toBe(1);
    const report = await evaluateAlerts(ctx.db, thresholds);
    expect(alertOf(report, "expired_jobs")).toMatchObject({ firing: true, value: 1, threshold: 0 });
    expect(report.firing).toBe(true);
  });

  it("clears the expired alert once the job is retried and confirmed", async () => {
    expect(await retryDeadJobs(ctx.db, { all: true, reason: "expired" })).toEqual({ retried: 1 });
    const drained = await drainer.drainUntilEmpty();
    expect(drained.repaired).toBe(1);
    expect(alertOf(await evaluateAlerts(ctx.db, thresholds), "expired_jobs")).toMatchObject({ firing: false, value: 0 });
  });

  it("fires the parked alert when a mapping error fails a job maxAttempts times", async () => {
    const { row } = await writer.createWithJob(ctx.db, counters, { owner: "parked", title: "not a number" });
    const passes: DrainResult[] = [];
    const deadline = Date.now() + 30_000;
    while (!passes.some((p) => p.parked > 0)) {
      if (Date.now() > deadline) throw new Error(`never parked: ${JSON.stringify(passes)}`);
      passes.push(await drainer.drainOnce());
    }
    // First failure is retried with backoff; the second (maxAttempts = 2) parks it.
    expect(passes.reduce((a, p) => a + p.retried, 0)).toBe(1);
    const report = await evaluateAlerts(ctx.db, thresholds);
    const parked = alertOf(report, "parked_jobs");
    expect(parked).toMatchObject({ firing: true, value: 1, threshold: 0 });
    const dead = await sql<{ last_error: string; kwargs: { id: string } }>`SELECT last_error, kwargs FROM tether.dead_job WHERE reason = 'parked'`.execute(ctx.db);
    expect(dead.rows[0]?.kwargs.id).toBe(String(row!.id));
    expect(dead.rows[0]?.last_error).toMatch(/parsing|mapper|long/i);
  });

  it("clears the parked alert once the cause is fixed and the job retried", async () => {
    await writer.updateWithJob(ctx.db, counters, (await sql<{ id: string }>`SELECT id FROM widget WHERE owner = 'parked'`.execute(ctx.db)).rows[0]!.id, { title: "42" });
    expect(await retryDeadJobs(ctx.db, { all: true, reason: "parked" })).toEqual({ retried: 1 });
    const drained = await drainer.drainUntilEmpty();
    expect(drained.parked).toBe(0);
    const report = await evaluateAlerts(ctx.db, thresholds);
    expect(alertOf(report, "parked_jobs")).toMatchObject({ firing: false, value: 0 });
    expect(report.firing).toBe(false);
    const id = (await sql<{ id: string }>`SELECT id FROM widget WHERE owner = 'parked'`.execute(ctx.db)).rows[0]!.id;
    const doc = await ctx.sink.client.get<{ count: number }>({ index: ctx.sink.indexName(counters.index), id: String(id) });
    expect(Number(doc._source?.count)).toBe(42);
  });
});
