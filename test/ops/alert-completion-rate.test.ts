import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createWriter, databaseNow, Drainer, enqueueReindex, evaluateAlerts, type AlertThresholds } from "@tether/core/internal";
import { createWidgetContext, widgets, type WidgetContext } from "../support/widgets.js";
import { alertOf, later } from "./alert-report.js";

const thresholds: AlertThresholds = { completionRateLowPerMinute: 1, completionRateWindowMinutes: 1, oldestDueJobMaxAgeSeconds: 600 };

describe("the completion-rate and oldest-due-job alerts", () => {
  let ctx: WidgetContext;
  let drainer: Drainer;
  // No sink: nothing is direct-synced, every job waits for a drainer.
  const writer = createWriter({ graceMs: 0 });

  beforeAll(async () => {
    ctx = await createWidgetContext();
    drainer = new Drainer({ db: ctx.db, sink: ctx.sink, collections: [widgets] });
  });
  afterAll(() => ctx.close());

  it("stay quiet on an idle system", async () => {
    const report = await evaluateAlerts(ctx.db, thresholds);
    expect(report.firing).toBe(false);
    const rate = alertOf(report, "completion_rate_low");
    expect(rate).toMatchObject({ firing: false, value: 0, threshold: 1 });
    expect(rate.message).toContain("idle");
  });

  it("fires the completion-rate alert on an idle system under the seed's rule, for traffic that never stops", async () => {
    const report = await evaluateAlerts(ctx.db, { ...thresholds, completionRateRequiresBacklog: false });
    expect(alertOf(report, "completion_rate_low").firing).toBe(true);
  });

  it("fires the completion-rate alert when due work waits a whole window and no drainer completes it", async () => {
    for (let i = 0; i < 5; i++) await writer.createWithJob(ctx.db, widgets, { owner: "rate", title: `t${i}` });
    const now = await databaseNow(ctx.db);
    // Just due: a drainer has not had its window yet.
    expect(alertOf(await evaluateAlerts(ctx.db, thresholds, { now }), "completion_rate_low").firing).toBe(false);
    const stalled = await evaluateAlerts(ctx.db, thresholds, { now: later(now, 61_000) });
    const rate = alertOf(stalled, "completion_rate_low");
    expect(stalled.firing).toBe(true);
    expect(rate).toMatchObject({ firing: true, value: 0 });
    expect(rate.message).toContain("5 job(s)");
    expect(rate.check.length).toBe(3);
  });

  it("fires the oldest-due alert for a live job waiting past its limit, but not for re-index work", async () => {
    const now = await databaseNow(ctx.db);
    const report = await evaluateAlerts(ctx.db, thresholds, { now: later(now, 11 * 60_000) });
    const oldest = alertOf(report, "oldest_due_job_too_old");
    expect(oldest.firing).toBe(true);
    expect(oldest.value).toBeGreaterThan(600);

    await ctx.insertRaw(5, "backfill");
    await enqueueReindex(ctx.db, widgets, { scope: "owner", value: "backfill" });
    // Live work (priority 1) is claimed before the re-index (priority 100): one batch of 5 takes it.
    const liveOnly = await new Drainer({ db: ctx.db, sink: ctx.sink, collections: [widgets], batchSize: 5 }).drainOnce();
    expect(liveOnly.repaired).toBe(5);
    const reindexOnly = await evaluateAlerts(ctx.db, thresholds, { now: later(now, 11 * 60_000) });
    expect(alertOf(reindexOnly, "oldest_due_job_too_old")).toMatchObject({ firing: false, value: 0 });
  });

  it("clear once a drainer completes the waiting work", async () => {
    const drained = await drainer.drainUntilEmpty();
    expect(drained.repaired).toBe(5);
    const now = await databaseNow(ctx.db);
    const report = await evaluateAlerts(ctx.db, thresholds, { now });
    expect(report.firing).toBe(false);
    expect(alertOf(report, "completion_rate_low").value).toBe(10);
    // Even the seed's unconditional rule is satisfied now that completions flow.
    const strict = await evaluateAlerts(ctx.db, { ...thresholds, completionRateRequiresBacklog: false }, { now });
    expect(alertOf(strict, "completion_rate_low").firing).toBe(false);
    expect(alertOf(await evaluateAlerts(ctx.db, thresholds, { now: later(now, 11 * 60_000) }), "oldest_due_job_too_old").firing).toBe(false);
  });

  it("fire while Elasticsearch is unreachable although the drainer runs and keeps rescheduling the work", async () => {
    // Every pass fails to read Elasticsearch and pushes the job's scheduled_at past the window.
    const blind = new Drainer({ db: ctx.db, sink: ctx.sinkAt("http://127.0.0.1:9"), collections: [widgets], sinkRetries: 0, backoff: { baseMs: 120_000, maxMs: 120_000 } });
    await writer.createWithJob(ctx.db, widgets, { owner: "outage", title: "t" });
    expect(await blind.drainOnce()).toMatchObject({ claimed: 1, retried: 1 });
    const now = await databaseNow(ctx.db);
    expect(alertOf(await evaluateAlerts(ctx.db, thresholds, { now: later(now, 61_000) }), "completion_rate_low").firing).toBe(true);
    expect(alertOf(await evaluateAlerts(ctx.db, thresholds, { now: later(now, 11 * 60_000) }), "oldest_due_job_too_old").firing).toBe(true);

    // Elasticsearch is back: the next pass after the backoff confirms the job and both clear.
    const recovered = later(now, 200_000);
    expect(await drainer.drainOnce({ now: recovered })).toMatchObject({ claimed: 1, repaired: 1 });
    expect((await evaluateAlerts(ctx.db, thresholds, { now: recovered })).firing).toBe(false);
  });
});
