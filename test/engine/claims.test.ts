import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { sql } from "kysely";
import { claimJobs, Drainer, insertJobs, pauseName, resumeName, defineCollection } from "@tether/core/internal";
import { createWidgetContext, widgets, type WidgetContext, type WidgetRow } from "../support/widgets.js";

describe("claiming jobs", () => {
  let ctx: WidgetContext;
  beforeAll(async () => {
    ctx = await createWidgetContext();
  });
  beforeEach(async () => {
    await sql`DELETE FROM tether.job; DELETE FROM tether.dead_job; DELETE FROM tether.paused_name; DELETE FROM tether.job_stat`.execute(ctx.db);
  });
  afterAll(() => ctx.close());

  const claimIds = (opts: { limit?: number; now?: Date } = {}) =>
    ctx.db.transaction().execute(async (trx) => (await claimJobs(trx, { limit: opts.limit ?? 2500, ...(opts.now ? { now: opts.now } : {}) })).map((j) => j.id));

  it("skips expired (sweeping them to the dead-letter table), parked and not-yet-due jobs", async () => {
    const [due] = await insertJobs(ctx.db, [{ name: "sync_widget", entityId: "1", priority: 1, tag: "live", delayMs: 0 }]);
    await insertJobs(ctx.db, [{ name: "sync_widget", entityId: "2", priority: 1, tag: "live", delayMs: 60_000 }]);
    await sql`INSERT INTO tether.job (name, priority, tag, kwargs, scheduled_at, expires_at)
              VALUES ('sync_widget', 1, 'live', '{"id":"3"}', now() - interval '31 days', now() - interval '1 day')`.execute(ctx.db);
    await sql`INSERT INTO tether.dead_job (job_id, name, enqueued_at, scheduled_at, expires_at, priority, tag, kwargs, attempts, reason)
              VALUES (99, 'sync_widget', now(), now(), now() + interval '1 day', 1, 'live', '{"id":"4"}', 5, 'parked')`.execute(ctx.db);
    expect(await claimIds()).toEqual([due]);
    const dead = await sql<{ kwargs: { id: string }; reason: string }>`SELECT kwargs, reason FROM tether.dead_job ORDER BY id`.execute(ctx.db);
    expect(dead.rows).toEqual([{ kwargs: { id: "4" }, reason: "parked" }, { kwargs: { id: "3" }, reason: "expired" }]);
  });

  it("sweeps the expired jobs at the front of the queue within the pass and still fills the batch from the live ones behind them", async () => {
    await sql`INSERT INTO tether.job (name, priority, tag, kwargs, scheduled_at, expires_at)
              SELECT 'sync_widget', 1, 'live', jsonb_build_object('id', g::text), now() - interval '31 days', now() - interval '1 day'
              FROM generate_series(1, 7) g`.execute(ctx.db);
    const live = await ctx.insertRaw(3);
    await insertJobs(ctx.db, live.map((entityId) => ({ name: "sync_widget", entityId, priority: 1, tag: "live", delayMs: 0 })));
    // A batch of 3 meets the 7 expired jobs first: the pass claims again until it holds 3 live ones.
    const drainer = new Drainer({ db: ctx.db, sink: ctx.sink, collections: [widgets], batchSize: 3 });
    expect(await drainer.drainOnce()).toMatchObject({ claimed: 3, expired: 7, repaired: 3 });
    const stat = await sql<{ n: string }>`SELECT sum(count) AS n FROM tether.job_stat WHERE outcome = 'expired'`.execute(ctx.db);
    expect(Number(stat.rows[0]!.n)).toBe(7);
    expect(await ctx.jobCount()).toBe(0);
  });

  it("sweeps the expired jobs of a paused lane but claims none of its live ones", async () => {
    await sql`INSERT INTO tether.job (name, priority, tag, kwargs, scheduled_at, expires_at)
              VALUES ('sync_widget', 1, 'live', '{"id":"1"}', now() - interval '31 days', now() - interval '1 day')`.execute(ctx.db);
    await insertJobs(ctx.db, [{ name: "sync_widget", entityId: "2", priority: 1, tag: "live", delayMs: 0 }]);
    await pauseName(ctx.db, "sync_widget", "es maintenance");
    const r = await new Drainer({ db: ctx.db, sink: ctx.sink, collections: [widgets] }).drainOnce();
    expect(r).toMatchObject({ claimed: 0, expired: 1 });
    expect(await ctx.jobCount()).toBe(1);
  });

  it("orders by priority first, then by when jobs became due", async () => {
    const ids = await insertJobs(ctx.db, [
      { name: "sync_widget", entityId: "1", priority: 1000, tag: "reindex", delayMs: 0 },
      { name: "sync_widget", entityId: "2", priority: 1, tag: "live", delayMs: 0 },
      { name: "sync_widget", entityId: "3", priority: 100, tag: "reindex", delayMs: 0 },
    ]);
    expect(await claimIds()).toEqual([ids[1], ids[2], ids[0]]);
  });

  it("sees a future job once the clock passes its schedule (pinned clock)", async () => {
    const [id] = await insertJobs(ctx.db, [{ name: "sync_widget", entityId: "1", priority: 1, tag: "live", delayMs: 60_000 }]);
    expect(await claimIds()).toEqual([]);
    expect(await claimIds({ now: new Date(Date.now() + 61_000) })).toEqual([id]);
  });

  it("never hands a job locked by one drain transaction to another", async () => {
    await insertJobs(ctx.db, Array.from({ length: 10 }, (_, i) => ({ name: "sync_widget", entityId: String(i), priority: 1, tag: "live", delayMs: 0 })));
    await ctx.db.transaction().execute(async (trx) => {
      const first = await claimJobs(trx, { limit: 4 });
      const second = await claimIds();
      expect(first).toHaveLength(4);
      expect(second).toHaveLength(6);
      expect(second.filter((id) => first.some((j) => j.id === id))).toEqual([]);
    });
  });

  it("does not claim a paused lane until it is resumed", async () => {
    await insertJobs(ctx.db, [{ name: "sync_widget", entityId: "1", priority: 1, tag: "live", delayMs: 0 }]);
    await pauseName(ctx.db, "sync_widget", "es maintenance");
    const drainer = new Drainer({ db: ctx.db, sink: ctx.sink, collections: [widgets] });
    expect((await drainer.drainOnce()).claimed).toBe(0);
    expect(await resumeName(ctx.db, "sync_widget")).toBe(true);
    expect((await drainer.drainOnce()).claimed).toBe(1);
  });

  it("parks unknown job names and malformed kwargs (by the same id rule as the API) with their reason instead of failing the batch", async () => {
    await sql`INSERT INTO tether.job (name, tag, kwargs) VALUES ('no_such_job', 'live', '{"id":"1"}'),
              ('sync_widget', 'live', '{"id": {"$ne": 1}}'), ('sync_widget', 'live', '{"nope": true}'),
              ('sync_widget', 'live', '{"id": "abc"}'), ('sync_widget', 'live', '{"id": "99999999999999999999"}'),
              ('sync_widget', 'live', '{"id": "0"}'), ('sync_widget', 'live', '{"id": "-5"}')`.execute(ctx.db);
    const [ok] = await ctx.insertRaw(1);
    await insertJobs(ctx.db, [{ name: "sync_widget", entityId: ok!, priority: 1, tag: "live", delayMs: 0 }]);
    const r = await new Drainer({ db: ctx.db, sink: ctx.sink, collections: [widgets] }).drainOnce();
    expect(r).toMatchObject({ claimed: 8, parked: 7, repaired: 1 });
    const dead = await sql<{ last_error: string }>`SELECT last_error FROM tether.dead_job ORDER BY id`.execute(ctx.db);
    expect(dead.rows.map((d) => d.last_error)).toEqual([
      expect.stringMatching(/unknown job name "no_such_job"/),
      expect.stringMatching(/kwargs.id must be a string/),
      expect.stringMatching(/kwargs.id must be a string/),
      expect.stringMatching(/kwargs.id: invalid id "abc": ids are bigint values/),
      expect.stringMatching(/kwargs.id: invalid id "99999999999999999999"/),
      // The id rule of paths and re-index lists: integer ids are positive.
      expect.stringMatching(/kwargs.id: invalid id "0": ids are bigint values in 1\.\.9223372036854775807/),
      expect.stringMatching(/kwargs.id: invalid id "-5"/),
    ]);
  });

  it("moves expired jobs to the dead-letter table and counts them as completions", async () => {
    await sql`INSERT INTO tether.job (name, priority, tag, kwargs, scheduled_at, expires_at)
              SELECT 'sync_widget', 1, 'live', jsonb_build_object('id', g::text), now(), now() + interval '1 hour'
              FROM generate_series(1, 5) g`.execute(ctx.db);
    const drainer = new Drainer({ db: ctx.db, sink: ctx.sink, collections: [widgets] });
    expect(await drainer.sweep(new Date(Date.now() + 2 * 3600_000))).toBe(5);
    const dead = await sql<{ n: string }>`SELECT count(*) AS n FROM tether.dead_job WHERE reason = 'expired'`.execute(ctx.db);
    expect(Number(dead.rows[0]!.n)).toBe(5);
    const stat = await sql<{ n: string }>`SELECT sum(count) AS n FROM tether.job_stat WHERE outcome = 'expired'`.execute(ctx.db);
    expect(Number(stat.rows[0]!.n)).toBe(5);
    expect(await ctx.jobCount()).toBe(0);
  });

  it("parks a poison job after its permanent failures and does not let it block the next 2500", async () => {
    // A collection whose document breaks its own mapping: a string into a long field.
    const poison = defineCollection<WidgetRow>({
      name: "poison",
      table: "widget",
      index: "poison",
      deletedColumn: "deleted_at",
      toDocument: (r) => ({ n: r.title === "bad" ? "not a number" : 1 }),
      mappings: { properties: { n: { type: "long" } } },
    });
    await ctx.sink.ensureIndex(poison.index, poison.mappings);
    const ids = await ctx.insertRaw(2501, "poison-owner");
    await sql`UPDATE widget SET title = 'bad' WHERE id = ${ids[0]}`.execute(ctx.db);
    // The poison job is the oldest and first in line.
    await insertJobs(ctx.db, [{ name: "sync_poison", entityId: ids[0]!, priority: 1, tag: "live", delayMs: 0 }]);
    await insertJobs(ctx.db, ids.slice(1).map((entityId) => ({ name: "sync_poison", entityId, priority: 1, tag: "live", delayMs: 0 })));
    const drainer = new Drainer({ db: ctx.db, sink: ctx.sink, collections: [poison], maxAttempts: 3, backoff: { baseMs: 1, maxMs: 1 } });
    const first = await drainer.drainOnce();
    expect(first).toMatchObject({ claimed: 2500, repaired: 2499, retried: 1 });
    const waitDue = () => sql`UPDATE tether.job SET scheduled_at = now()`.execute(ctx.db);
    await waitDue();
    const second = await drainer.drainOnce();
    expect(second).toMatchObject({ claimed: 2, repaired: 1, retried: 1 });
    await waitDue();
    const third = await drainer.drainOnce();
    expect(third).toMatchObject({ claimed: 1, parked: 1 });
    const dead = await sql<{ last_error: string; attempts: number; reason: string }>`SELECT last_error, attempts, reason FROM tether.dead_job`.execute(ctx.db);
    expect(dead.rows).toHaveLength(1);
    expect(dead.rows[0]).toMatchObject({ reason: "parked", attempts: 3 });
    expect(dead.rows[0]!.last_error).toMatch(/mapper_parsing_exception|document_parsing_exception/);
    expect(await ctx.jobCount()).toBe(0);
  });
});
