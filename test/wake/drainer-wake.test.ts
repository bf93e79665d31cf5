import { once } from "node:events";
import { sql } from "kysely";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { createWriter, Drainer, enqueueReindex, notifyWake, retryDeadJobs, type DrainResult, type PassReason } from "@tether/core/internal";
import { createWidgetContext, widgets, type WidgetContext } from "../support/widgets.js";

type Event = { kind: "pass"; reason: PassReason } | { kind: "wake"; source: string; payload: string } | { kind: "batch"; claimed: number };

/**
 * A drainer with a 60 s interval that LISTENs: due-now work must be picked up by a wake-up,
 * never by the interval (which cannot come round within these tests' time).
 */
describe("a drainer woken by LISTEN/NOTIFY", () => {
  let ctx: WidgetContext;
  let drainer: Drainer;
  let events: Event[] = [];

  beforeAll(async () => {
    ctx = await createWidgetContext();
    drainer = new Drainer({
      db: ctx.db,
      sink: ctx.sink,
      collections: [widgets],
      intervalMs: 60_000,
      listen: { connectionString: ctx.databaseUrl, applicationName: "tether-wake-test" },
    });
    drainer.on("pass", (reason) => events.push({ kind: "pass", reason }));
    drainer.on("wake", (w) => events.push({ kind: "wake", ...w }));
    drainer.on("batch", (r) => events.push({ kind: "batch", claimed: r.claimed }));
    const listening = once(drainer, "listening");
    const firstPass = once(drainer, "batch");
    drainer.start();
    await Promise.all([listening, firstPass]);
  });
  afterAll(async () => {
    await drainer.stop();
    await ctx.close();
  });
  afterEach(() => {
    events = [];
  });

  /** Resolves with the next pass that claimed something. */
  const nextClaim = () =>
    new Promise<DrainResult>((resolve) => {
      const on = (r: DrainResult) => {
        if (r.claimed === 0) return;
        drainer.off("batch", on);
        resolve(r);
      };
      drainer.on("batch", on);
    });
  /** The reason of the pass that produced the last claiming batch. */
  const reasonOfLastClaim = () => {
    const i = events.findLastIndex((e) => e.kind === "batch" && e.claimed > 0);
    const pass = events.slice(0, i).findLast((e) => e.kind === "pass");
    return pass?.kind === "pass" ? pass.reason : undefined;
  };

  it("picks up an admin re-index at once", async () => {
    const ids = await ctx.insertRaw(5);
    const claimed = nextClaim();
    await enqueueReindex(ctx.db, widgets, { scope: "ids", ids });
    const r = await claimed;
    expect(r.claimed).toBe(5);
    expect(r.repaired).toBe(5);
    expect(reasonOfLastClaim()).toBe("wake");
    expect(events.find((e) => e.kind === "wake")).toEqual({ kind: "wake", source: "notify", payload: "sync_widget" });
  });

  it("picks up a parked retry at once", async () => {
    const [id] = await ctx.insertRaw(1);
    await sql`INSERT INTO tether.dead_job (job_id, name, enqueued_at, scheduled_at, expires_at, priority, tag, kwargs, attempts, reason)
              VALUES (1, 'sync_widget', now(), now(), now() + interval '1 day', 1, 'live', jsonb_build_object('id', ${id}::text), 5, 'parked')`.execute(ctx.db);
    const claimed = nextClaim();
    expect(await retryDeadJobs(ctx.db, { all: true })).toEqual({ retried: 1 });
    expect((await claimed).repaired).toBe(1);
    expect(reasonOfLastClaim()).toBe("wake");
  });

  it("picks up the job of a write whose direct sync failed at once, despite its grace period", async () => {
    const deadSink = ctx.sinkAt("http://127.0.0.1:9");
    const writer = createWriter({ sink: deadSink, directSyncTimeoutMs: 2_000 });
    const claimed = nextClaim();
    const w = await writer.createWithJob(ctx.db, widgets, { owner: "o", title: "direct sync failed" });
    expect(w.sync).toBe("error");
    const r = await claimed;
    expect(r.repaired).toBe(1);
    expect(reasonOfLastClaim()).toBe("wake");
    expect((await ctx.sink.fetchStates(widgets.index, [w.changes[0]!.id])).get(w.changes[0]!.id)).toMatchObject({ version: 1, deleted: false });
  });

  it("is not woken by grace-delayed jobs, and a burst of notifications gives one pass", async () => {
    const writer = createWriter({});
    await writer.createWithJob(ctx.db, widgets, { owner: "o", title: "grace" });
    // Twenty distinct notifications in one COMMIT arrive together: one pass, not twenty.
    const burst = once(drainer, "batch");
    await ctx.db.transaction().execute(async (trx) => {
      for (let i = 0; i < 20; i++) await notifyWake(trx, `burst ${i}`);
    });
    await burst;
    const marker = once(drainer, "batch");
    await notifyWake(ctx.db, "marker");
    await marker;
    const wakes = events.filter((e) => e.kind === "wake").map((e) => (e.kind === "wake" ? e.payload : ""));
    expect(wakes).toEqual([...Array.from({ length: 20 }, (_, i) => `burst ${i}`), "marker"]);
    expect(events.filter((e) => e.kind === "pass")).toEqual([{ kind: "pass", reason: "wake" }, { kind: "pass", reason: "wake" }]);
  });

  it("re-establishes a killed LISTEN session and looks for work once it listens again", async () => {
    const back = once(drainer, "listening");
    const relistenPass = new Promise<void>((resolve) => drainer.on("wake", (w) => w.source === "listening" && resolve()));
    const killed = await sql<{ ok: boolean }>`
      SELECT pg_terminate_backend(pid) AS ok FROM pg_stat_activity WHERE application_name = 'tether-wake-test' AND datname = current_database()`.execute(ctx.db);
    expect(killed.rows).toEqual([{ ok: true }]);
    await back;
    await relistenPass;
    const ids = await ctx.insertRaw(2);
    const claimed = nextClaim();
    await enqueueReindex(ctx.db, widgets, { scope: "ids", ids });
    expect((await claimed).claimed).toBe(2);
    expect(reasonOfLastClaim()).toBe("wake");
  });
});

describe("a drainer whose LISTEN session cannot be opened", () => {
  let ctx: WidgetContext;
  beforeAll(async () => {
    ctx = await createWidgetContext();
  });
  afterAll(() => ctx.close());

  it("keeps draining on its interval", async () => {
    const drainer = new Drainer({
      db: ctx.db,
      sink: ctx.sink,
      collections: [widgets],
      intervalMs: 200,
      listen: { connectionString: "postgres://postgres@127.0.0.1:9/nowhere", reconnectMinMs: 50, reconnectMaxMs: 200 },
    });
    const reasons: PassReason[] = [];
    drainer.on("pass", (r) => reasons.push(r));
    let passes = 0;
    drainer.on("listening", () => expect.fail("cannot listen on a closed port"));
    const ids = await ctx.insertRaw(3);
    await enqueueReindex(ctx.db, widgets, { scope: "ids", ids });
    try {
      drainer.start();
      // The start pass takes the re-index; two more passes come from the interval alone.
      const intervalPasses = new Promise<void>((resolve) => drainer.on("pass", () => reasons.filter((r) => r === "interval").length >= 2 && resolve()));
      await intervalPasses;
      passes = reasons.length;
    } finally {
      await drainer.stop();
    }
    expect(passes).toBeGreaterThanOrEqual(3);
    expect(reasons.slice(0, 3)).toEqual(["start", "interval", "interval"]);
    expect(await ctx.jobCount()).toBe(0);
  });
});
