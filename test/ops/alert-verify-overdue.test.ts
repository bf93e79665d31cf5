import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { sql } from "kysely";
import { createVerifyRun, databaseNow, evaluateAlerts, failVerifyRun, finishVerifyRun, startScheduledRun } from "@tether/core/internal";
import { createWidgetContext, type WidgetContext } from "../support/widgets.js";
import { alertOf, later } from "./alert-report.js";

const HOUR = 3_600_000;
/** verify_overdue's default: 3 hours. */
const MAX_AGE = 3 * HOUR;

describe("the verify-overdue alert of a collection that has never completed a run", () => {
  let ctx: WidgetContext;
  beforeAll(async () => {
    ctx = await createWidgetContext();
  });
  afterAll(() => ctx.close());

  const overdue = async (now: Date, scheduleStartedAt?: Date) =>
    alertOf(await evaluateAlerts(ctx.db, {}, { now, collections: ["widget"], ...(scheduleStartedAt ? { scheduleStartedAt } : {}) }), "verify_overdue");
  const startedAt = async () => (await sql<{ at: Date }>`SELECT min(started_at) AS at FROM tether.verify_run WHERE collection = 'widget'`.execute(ctx.db)).rows[0]!.at;

  it("with no run at all: silent right after the schedule started, firing once the max age has passed since", async () => {
    const start = await databaseNow(ctx.db);
    expect(await overdue(start, start)).toMatchObject({ firing: false, value: 0 });
    expect(await overdue(later(start, MAX_AGE - 60_000), start)).toMatchObject({ firing: false });
    const late = await overdue(later(start, MAX_AGE + 60_000), start);
    expect(late).toMatchObject({ firing: true, value: MAX_AGE / 1000 + 60 });
    expect(late.message).toContain("overdue: widget (never completed)");
  });

  it("with runs that never complete: counted from the first run's start, not from a later restart of the schedule", async () => {
    const run = await startScheduledRun(ctx.db, "widget", "fast", "test-owner", 60_000);
    await failVerifyRun(ctx.db, run!.id, "engine unreachable");
    const first = await startedAt();
    // The daemon restarted (a crash loop): its own start is recent, the first run is not.
    expect(await overdue(later(first, MAX_AGE - 60_000), later(first, MAX_AGE - 120_000))).toMatchObject({ firing: false });
    expect(await overdue(later(first, MAX_AGE + 60_000), later(first, MAX_AGE))).toMatchObject({ firing: true, value: MAX_AGE / 1000 + 60 });
  });

  it("once a run completes: counted from its end, and the collection is no longer 'never completed'", async () => {
    const run = await createVerifyRun(ctx.db, "widget", "cli:test", "fast");
    await finishVerifyRun(ctx.db, run.id, { bucketsCompared: 1, bucketsDiffering: 0, drifted: {}, driftedTotal: 0, enqueued: 0, samples: {}, documentsCompared: 0 });
    const done = (await sql<{ at: Date }>`SELECT finished_at AS at FROM tether.verify_run WHERE id = ${run.id}::bigint`.execute(ctx.db)).rows[0]!.at;
    expect(await overdue(later(done, HOUR))).toMatchObject({ firing: false });
    const late = await overdue(later(done, MAX_AGE + 60_000));
    expect(late).toMatchObject({ firing: true, value: MAX_AGE / 1000 + 60 });
    expect(late.message).toContain("overdue: widget");
    expect(late.message).not.toContain("never completed");
  });
});
