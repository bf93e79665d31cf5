import net from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { sql } from "kysely";
import { defineCollection, Drainer, insertJobs } from "@tether/core/internal";
import { createWidgetContext, widgets, type WidgetContext, type WidgetRow } from "../support/widgets.js";

describe("the drain deadline", () => {
  let ctx: WidgetContext;
  const sockets: net.Socket[] = [];
  let hole: net.Server;
  let holeUrl: string;
  beforeAll(async () => {
    ctx = await createWidgetContext();
    hole = net.createServer((s) => sockets.push(s));
    await new Promise<void>((r) => hole.listen(0, "127.0.0.1", r));
    holeUrl = `http://127.0.0.1:${(hole.address() as net.AddressInfo).port}`;
  });
  afterAll(async () => {
    for (const s of sockets) s.destroy();
    hole.close();
    await ctx.close();
  });

  it("releases its locks and reschedules its jobs when Elasticsearch hangs past the deadline", async () => {
    const ids = await ctx.insertRaw(20);
    await insertJobs(ctx.db, ids.map((entityId) => ({ name: "sync_widget", entityId, priority: 1, tag: "live", delayMs: 0 })));
    const drainer = new Drainer({ db: ctx.db, sink: ctx.sinkAt(holeUrl), collections: [widgets], deadlineMs: 1_000, sinkRetries: 0 });
    const before = (await sql<{ t: Date }>`SELECT now() AS t`.execute(ctx.db)).rows[0]!.t;
    const r = await drainer.drainOnce();
    expect(r).toMatchObject({ claimed: 20, retried: 20, repaired: 0 });
    // Nothing stays locked: every job can be claimed by someone else right away.
    const free = await sql<{ n: string }>`SELECT count(*) AS n FROM (SELECT id FROM tether.job FOR UPDATE SKIP LOCKED) j`.execute(ctx.db);
    expect(Number(free.rows[0]!.n)).toBe(20);
    const jobs = await sql<{ attempts: number; last_error: string; future: boolean }>`
      SELECT attempts, last_error, scheduled_at > ${before}::timestamptz + interval '1 second' AS future FROM tether.job`.execute(ctx.db);
    expect(jobs.rows.every((j) => j.attempts === 1 && j.future && /deadline|aborted/i.test(j.last_error))).toBe(true);
    // Once Elasticsearch answers again, the same jobs drain.
    await sql`UPDATE tether.job SET scheduled_at = now()`.execute(ctx.db);
    const healed = await new Drainer({ db: ctx.db, sink: ctx.sink, collections: [widgets] }).drainOnce();
    expect(healed).toMatchObject({ claimed: 20, repaired: 20 });
  });

  it("bounds the drain transaction's statements, locks and idle time from its claim on", async () => {
    // A collection whose loader reads the settings inside the drain transaction.
    let seen: Record<string, string> | undefined;
    const probe = defineCollection<WidgetRow>({
      name: "widget",
      table: "widget",
      index: "widgets",
      deletedColumn: "deleted_at",
      toDocument: widgets.toDocument,
      mappings: widgets.mappings,
      load: async (db, ids) => {
        const r = await sql<Record<string, string>>`SELECT current_setting('statement_timeout') AS statement, current_setting('lock_timeout') AS lock,
                                                          current_setting('idle_in_transaction_session_timeout') AS idle`.execute(db);
        seen = r.rows[0];
        return (await sql<WidgetRow>`SELECT * FROM widget WHERE id = ANY(${ids}::bigint[])`.execute(db)).rows;
      },
    });
    const ids = await ctx.insertRaw(1);
    await insertJobs(ctx.db, ids.map((entityId) => ({ name: "sync_widget", entityId, priority: 1, tag: "live", delayMs: 0 })));
    expect(await new Drainer({ db: ctx.db, sink: ctx.sink, collections: [probe], deadlineMs: 4_000 }).drainOnce()).toMatchObject({ claimed: 1 });
    expect(seen).toEqual({ statement: "4s", lock: "5s", idle: "14s" });
  });
});
