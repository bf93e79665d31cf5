import { sql } from "kysely";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  createWriter,
  databaseNow,
  Drainer,
  enqueueReindex,
  evaluateAlerts,
  pauseName,
  resumeName,
  runMaintenance,
  type AlertThresholds,
} from "@tether/core/internal";
import { createWidgetContext, widgets, type WidgetContext } from "../support/widgets.js";
import { alertOf, later } from "./alert-report.js";

const FLOOD = 30;
const thresholds: AlertThresholds = { queueLengthHigh: 20, queueLengthWindowMinutes: 1, completionRateWindowMinutes: 1 };

describe("the queue-length alert", () => {
  let ctx: WidgetContext;
  const writer = createWriter({ graceMs: 0 });

  beforeAll(async () => {
    ctx = await createWidgetContext();
    // The lane is paused, as during Elasticsearch maintenance: nothing drains while we flood it.
    await pauseName(ctx.db, widgets.jobName, "queue-length test");
  });
  afterAll(() => ctx.close());

  it("does not fire for an admin re-index flood above the watermark", async () => {
    await ctx.insertRaw(FLOOD, "backfill");
    const r = await enqueueReindex(ctx.db, widgets, { scope: "owner", value: "backfill" });
    expect(r.enqueued).toBe(FLOOD);
    const now = await databaseNow(ctx.db);
    // Samples (pinned well before the later tests' windows) record the flood as non-live.
    const a = await runMaintenance(ctx.db, { now: later(now, -300_000), sampleIntervalMs: 0 });
    const b = await runMaintenance(ctx.db, { now: later(now, -200_000), sampleIntervalMs: 0 });
    for (const m of [a, b]) expect(m.sample).toMatchObject({ liveLength: 0, totalLength: FLOOD });
    const report = await evaluateAlerts(ctx.db, thresholds, { now: later(now, 61_000) });
    expect(alertOf(report, "queue_length_high")).toMatchObject({ firing: false, value: 0, threshold: 20 });
    // The paused lane's waiting work is deliberate: it does not count as a stalled drainer.
    expect(alertOf(report, "completion_rate_low").firing).toBe(false);
  });

  it("fires when live writes stay above the watermark for the window", async () => {
    for (let i = 0; i < FLOOD; i++) await writer.createWithJob(ctx.db, widgets, { owner: "live", title: `t${i}` });
    const now = await databaseNow(ctx.db);
    // Above, but not yet for a window.
    expect(alertOf(await evaluateAlerts(ctx.db, thresholds, { now }), "queue_length_high")).toMatchObject({ firing: false, value: FLOOD });
    // A window later the same jobs are still queued: it held above the watermark throughout.
    const report = await evaluateAlerts(ctx.db, thresholds, { now: later(now, 61_000) });
    const queue = alertOf(report, "queue_length_high");
    expect(queue).toMatchObject({ firing: true, value: FLOOD, threshold: 20 });
    expect(queue.message).toContain(`${FLOOD} queued since before the window`);
  });

  it("fires from the maintenance samples when the queue stayed above the watermark", async () => {
    const now = await databaseNow(ctx.db);
    // No job is older than the window, so only the samples can show how long it held.
    expect(alertOf(await evaluateAlerts(ctx.db, thresholds, { now }), "queue_length_high").firing).toBe(false);
    await runMaintenance(ctx.db, { now: later(now, -61_000), sampleIntervalMs: 0 });
    await runMaintenance(ctx.db, { now: later(now, -30_000), sampleIntervalMs: 0 });
    const report = await evaluateAlerts(ctx.db, thresholds, { now });
    expect(alertOf(report, "queue_length_high").firing).toBe(true);
  });

  it("restarts the window when a sample dips below the watermark", async () => {
    const now = await databaseNow(ctx.db);
    await sql`INSERT INTO tether.queue_sample (at, live_length, total_length, expired, parked, oldest_due_age_seconds)
              VALUES (${later(now, -20_000).toISOString()}::timestamptz, 3, 3, 0, 0, 0)`.execute(ctx.db);
    await runMaintenance(ctx.db, { now: later(now, -10_000), sampleIntervalMs: 0 });
    expect(alertOf(await evaluateAlerts(ctx.db, thresholds, { now }), "queue_length_high").firing).toBe(false);
  });

  it("clears once the lane is resumed and drained", async () => {
    await resumeName(ctx.db, widgets.jobName);
    const drained = await new Drainer({ db: ctx.db, sink: ctx.sink, collections: [widgets] }).drainUntilEmpty();
    expect(drained.repaired).toBe(2 * FLOOD);
    await runMaintenance(ctx.db, { sampleIntervalMs: 0 });
    const now = await databaseNow(ctx.db);
    const report = await evaluateAlerts(ctx.db, thresholds, { now: later(now, 61_000) });
    expect(alertOf(report, "queue_length_high")).toMatchObject({ firing: false, value: 0 });
    expect(report.firing).toBe(false);
  });
});
