import { sql } from "kysely";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import {
  databaseNow,
  Drainer,
  enableCapture,
  evaluateAlerts,
  insertJobs,
  latestQueueSample,
  livePersistentJobs,
  pauseName,
  readQueue,
  resumeName,
  runMaintenance,
  type AlertThresholds,
  type NewJob,
} from "@tether/core/internal";
import { createShopContext, type ShopContext } from "../support/shop-context.js";
import { shopProducts } from "../support/shop.js";
import { alertOf, later } from "./alert-report.js";

/**
 * Fan-out work (jobs tagged `fanout:…`: a change of a table the documents read, and the sync jobs
 * it expands into) is neither live nor re-index work: a backlog of it is visible in figures of its
 * own and never pages as live work, and a fan-out that is stuck is still caught, by the
 * completion-rate alert (nothing completes) and the parked-jobs alert (its expansion kept failing).
 */

let ctx: ShopContext;
beforeAll(async () => {
  ctx = await createShopContext();
  await enableCapture(ctx.db, shopProducts, { graceMs: 0 });
});
afterAll(() => ctx.close());
beforeEach(async () => {
  await sql`TRUNCATE tether.job, tether.dead_job, tether.queue_sample, tether.job_stat, tether.paused_name`.execute(ctx.db);
});

const thresholds: AlertThresholds = { queueLengthHigh: 4, queueLengthWindowMinutes: 0, oldestDueJobMaxAgeSeconds: 600, completionRateWindowMinutes: 10 };
const jobs = (n: number, tag: string, priority = 1): NewJob[] => Array.from({ length: n }, (_, i) => ({ name: shopProducts.jobName, entityId: String(1000 + i), priority, tag, delayMs: 0 }));

const drainer = (o: { maxAttempts?: number } = {}) => new Drainer({ db: ctx.db, sink: ctx.sink, collections: [shopProducts], ...o });

/** A category with `n` products in it, as plain SQL writes them, drained: the queue is empty. Returns its id. */
async function category(name: string, n: number): Promise<string> {
  const id = (await sql<{ id: string }>`INSERT INTO shop_category (name) VALUES (${name}) RETURNING id::text`.execute(ctx.db)).rows[0]!.id;
  await sql`INSERT INTO shop_product (name, category_id) SELECT ${name} || ' ' || g, ${id}::bigint FROM generate_series(1, ${n}::int) g`.execute(ctx.db);
  expect((await drainer().drainUntilEmpty()).error).toBeUndefined();
  expect((await readQueue(ctx.db)).totalLength).toBe(0);
  return id;
}

const rename = (id: string, name: string) => sql`UPDATE shop_category SET name = ${name} WHERE id = ${id}::bigint`.execute(ctx.db);

describe("fan-out work apart from live work", () => {
  it("has its own length and oldest-due figures in the read model and the samples, and stays out of the live ones and their alerts", async () => {
    // Nothing drains: the sync lane is paused, as during an engine upgrade.
    await pauseName(ctx.db, shopProducts.jobName, "figures test");
    await insertJobs(ctx.db, [...jobs(3, "live"), ...jobs(4, "reindex", 100), ...jobs(5, "fanout:category.update", 10)]);
    // A new category: one fan-out job, tagged fanout:category.insert (it reaches no product yet).
    await sql`INSERT INTO shop_category (name) VALUES ('Scarves')`.execute(ctx.db);
    // The fan-out work has waited an hour; the live work has just arrived.
    await sql`UPDATE tether.job SET scheduled_at = now() - interval '1 hour', enqueued_at = now() - interval '1 hour' WHERE starts_with(tag, 'fanout:')`.execute(ctx.db);

    const q = await readQueue(ctx.db);
    expect(q).toMatchObject({ liveLength: 3, fanoutLength: 6, totalLength: 13 });
    expect(q.fanoutOldestDueAgeSeconds).toBeGreaterThanOrEqual(3600);
    expect(q.oldestDueAgeSeconds).toBeLessThan(600);
    expect(q.fanouts).toEqual([expect.objectContaining({ collection: "shop_product", embed: "category", tag: "fanout:category.insert", done: 0, total: null })]);
    const now = await databaseNow(ctx.db);
    expect(await livePersistentJobs(ctx.db, later(now, 1_000))).toBe(3);

    const m = await runMaintenance(ctx.db, { sampleIntervalMs: 0 });
    expect(m.sample).toMatchObject({ liveLength: 3, fanoutLength: 6, totalLength: 13 });
    expect(m.sample!.fanoutOldestDueAgeSeconds).toBeGreaterThanOrEqual(3600);
    expect(await latestQueueSample(ctx.db)).toMatchObject({ liveLength: 3, fanoutLength: 6, fanoutOldestDueAgeSeconds: m.sample!.fanoutOldestDueAgeSeconds });

    // Six fan-out jobs an hour old page neither as queue length (watermark 4) nor as lag.
    let report = await evaluateAlerts(ctx.db, thresholds);
    expect(alertOf(report, "queue_length_high")).toMatchObject({ firing: false, value: 3 });
    expect(alertOf(report, "queue_length_high").message).toContain("6 fan-out job(s)");
    expect(alertOf(report, "oldest_due_job_too_old").firing).toBe(false);
    // The same count of live work does.
    await insertJobs(ctx.db, jobs(3, "live"));
    report = await evaluateAlerts(ctx.db, thresholds);
    expect(alertOf(report, "queue_length_high")).toMatchObject({ firing: true, value: 6 });
  });

  it("a fan-out that no drainer expands fires the completion-rate alert a window after it became due, unless its lane is paused", async () => {
    await rename(await category("Belts", 3), "Braces");
    expect((await readQueue(ctx.db)).byName).toEqual([expect.objectContaining({ name: shopProducts.fanoutJobName, total: 1 })]);
    const now = await databaseNow(ctx.db);
    let report = await evaluateAlerts(ctx.db, thresholds, { now: later(now, 11 * 60_000) });
    expect(alertOf(report, "completion_rate_low").firing).toBe(true);
    expect(alertOf(report, "queue_length_high").firing).toBe(false);
    expect(alertOf(report, "oldest_due_job_too_old").firing).toBe(false);

    // Its fan-out lane paused: drainers leave it alone, and a deliberate pause does not page.
    await pauseName(ctx.db, shopProducts.fanoutJobName!, "a planned pause");
    expect((await drainer().drainOnce()).fanout).toMatchObject({ claimed: 0 });
    report = await evaluateAlerts(ctx.db, thresholds, { now: later(now, 11 * 60_000) });
    expect(alertOf(report, "completion_rate_low").firing).toBe(false);
    await resumeName(ctx.db, shopProducts.fanoutJobName!);
    expect((await drainer().drainUntilEmpty()).error).toBeUndefined();
    expect((await readQueue(ctx.db)).totalLength).toBe(0);
  });

  it("a fan-out whose expansion keeps failing shows its attempts and error, then is parked: the parked-jobs alert fires", async () => {
    const id = await category("Ties", 2);
    // The database refuses every bump of a product's version: a real failure of the expansion's statement.
    await sql`CREATE FUNCTION refuse_bump() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN RAISE EXCEPTION 'the product table is read-only today'; END $$`.execute(ctx.db);
    await sql`CREATE TRIGGER refuse_bump BEFORE UPDATE ON shop_product FOR EACH ROW EXECUTE FUNCTION refuse_bump()`.execute(ctx.db);
    try {
      await rename(id, "Bow ties");
      const failing = drainer({ maxAttempts: 2 });
      expect((await failing.drainOnce()).fanout).toMatchObject({ claimed: 1, retried: 1, parked: 0 });
      const q = await readQueue(ctx.db);
      expect(q.fanouts).toEqual([expect.objectContaining({ link: id, attempts: 1, lastError: expect.stringContaining("the product table is read-only today") })]);
      expect(alertOf(await evaluateAlerts(ctx.db, thresholds), "parked_jobs").firing).toBe(false);
      // Its backoff over (moved, not waited for): the second failure parks it.
      await sql`UPDATE tether.job SET scheduled_at = now() - interval '1 second' WHERE name = ${shopProducts.fanoutJobName!}`.execute(ctx.db);
      expect((await failing.drainOnce()).fanout).toMatchObject({ claimed: 1, parked: 1 });
      const report = await evaluateAlerts(ctx.db, thresholds);
      expect(alertOf(report, "parked_jobs")).toMatchObject({ firing: true, value: 1 });
      expect((await readQueue(ctx.db)).fanouts).toEqual([]);
    } finally {
      await sql`DROP TRIGGER refuse_bump ON shop_product`.execute(ctx.db);
      await sql`DROP FUNCTION refuse_bump()`.execute(ctx.db);
    }
  });
});
