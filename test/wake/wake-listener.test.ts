import { once } from "node:events";
import { sql } from "kysely";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { enableCapture, expediteJobs, notifyWake, WakeListener } from "@tether/core/internal";
import { createWidgetContext, widgets, type WidgetContext } from "../support/widgets.js";

describe("the wake-up listener", () => {
  let ctx: WidgetContext;
  let listener: WakeListener;
  const payloads: string[] = [];

  beforeAll(async () => {
    ctx = await createWidgetContext();
    listener = new WakeListener({ connectionString: ctx.databaseUrl, applicationName: "tether-listen-test" });
    listener.on("notification", (p) => payloads.push(p));
    const listening = once(listener, "listening");
    await listener.start();
    await listening;
  });
  afterAll(async () => {
    await listener.stop();
    await ctx.close();
  });

  const next = () => once(listener, "notification").then(([p]) => p as string);

  it("hears a NOTIFY only once the enqueueing transaction commits", async () => {
    payloads.length = 0;
    await expect(
      ctx.db.transaction().execute(async (trx) => {
        await notifyWake(trx, "rolled_back");
        throw new Error("rollback");
      }),
    ).rejects.toThrow("rollback");
    const heard = next();
    await ctx.db.transaction().execute(async (trx) => {
      await notifyWake(trx, "sync_widget");
      await notifyWake(trx, "sync_widget");
    });
    expect(await heard).toBe("sync_widget");
    // A marker sent after: everything before it has been delivered, and the rollback never was.
    const marker = next();
    await notifyWake(ctx.db, "marker");
    await marker;
    expect(payloads).toEqual(["sync_widget", "marker"]);
  });

  it("is woken by a capture trigger with no grace, and not by one with a grace period", async () => {
    payloads.length = 0;
    await enableCapture(ctx.db, widgets, { graceMs: 60_000 });
    await ctx.insertRaw(3);
    await enableCapture(ctx.db, widgets, { graceMs: 0 });
    const heard = next();
    await ctx.insertRaw(2);
    expect(await heard).toBe("sync_widget");
    expect(payloads).toEqual(["sync_widget"]);
  });

  it("is woken when grace-delayed jobs are made due, and not when none moved", async () => {
    await sql`TRUNCATE tether.job`.execute(ctx.db);
    const r = await sql<{ id: string }>`
      INSERT INTO tether.job (name, tag, scheduled_at, kwargs) VALUES ('sync_widget', 'live', now() + interval '1 minute', '{"id": "1"}') RETURNING id`.execute(ctx.db);
    payloads.length = 0;
    const heard = next();
    expect(await expediteJobs(ctx.db, [r.rows[0]!.id])).toBe(1);
    expect(await heard).toBe("sync_widget");
    expect(await expediteJobs(ctx.db, [r.rows[0]!.id])).toBe(0);
    const marker = next();
    await notifyWake(ctx.db, "marker");
    await marker;
    expect(payloads).toEqual(["sync_widget", "marker"]);
  });

  it("re-establishes LISTEN after its session is terminated", async () => {
    const lost = once(listener, "lost");
    const back = once(listener, "listening");
    const killed = await sql<{ ok: boolean }>`
      SELECT pg_terminate_backend(pid) AS ok FROM pg_stat_activity WHERE application_name = 'tether-listen-test' AND datname = current_database()`.execute(ctx.db);
    expect(killed.rows).toEqual([{ ok: true }]);
    await lost;
    expect(listener.listening).toBe(false);
    await back;
    expect(listener.listening).toBe(true);
    const heard = next();
    await notifyWake(ctx.db, "after_reconnect");
    expect(await heard).toBe("after_reconnect");
  });
});
