import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { sql } from "kysely";
import { Drainer } from "@tether/core";
import { createWidgetContext, widgets, type WidgetContext } from "../support/widgets.js";

describe("many drainers", () => {
  let ctx: WidgetContext;
  beforeAll(async () => {
    ctx = await createWidgetContext({ poolSize: 12 });
  });
  afterAll(() => ctx.close());

  it("never process the same job at the same time (two passes each), and converge with nothing left", async () => {
    const ids = await ctx.insertRaw(10_000, "crowd");
    // 20k jobs: two per entity, interleaved, so duplicates land in different batches too.
    await sql`INSERT INTO tether.job (name, priority, tag, kwargs)
              SELECT 'sync_widget', 1, 'live', jsonb_build_object('id', w.id::text)
              FROM widget w, generate_series(1, 2) WHERE w.owner = 'crowd'`.execute(ctx.db);
    expect(await ctx.jobCount()).toBe(20_000);

    const held = new Map<string, number>();
    const overlaps: string[] = [];
    const drainers = Array.from({ length: 4 }, (_, n) => {
      const d = new Drainer({ db: ctx.db, sink: ctx.sink, collections: [widgets], batchSize: 1000, concurrency: 2 });
      d.on("claimed", (jobIds) => {
        for (const id of jobIds) {
          if (held.has(id)) overlaps.push(`${id} held by ${held.get(id)} and ${n}`);
          held.set(id, n);
        }
      });
      d.on("releasing", (jobIds) => {
        for (const id of jobIds) if (held.get(id) === n) held.delete(id);
      });
      return d;
    });
    const totals = await Promise.all(drainers.map((d) => d.drainUntilEmpty()));
    // A last pass confirms anything a drainer wrote but another was still reading.
    const tail = await drainers[0]!.drainUntilEmpty();

    expect(overlaps).toEqual([]);
    for (const t of totals) expect(t.error).toBeUndefined();
    expect(totals.every((t) => t.claimed > 0)).toBe(true);
    expect(await ctx.jobCount()).toBe(0);
    const confirmed = [...totals, tail].reduce((a, t) => a + t.repaired + t.up_to_date, 0);
    expect(confirmed).toBe(20_000);
    const states = await ctx.sink.fetchStates("widgets", ids);
    expect(states.size).toBe(10_000);
    expect([...states.values()].every((s) => s.version === 1 && !s.deleted)).toBe(true);
  });
});

describe("a drainer running passes side by side", () => {
  let ctx: WidgetContext;
  beforeAll(async () => {
    // Exactly one connection per pass: a pass that asked the pool for a second connection
    // while holding its transaction's would wait on the others forever.
    ctx = await createWidgetContext({ poolSize: 3 });
  });
  afterAll(() => ctx.close());

  it("needs only one pooled connection per pass", async () => {
    await ctx.insertRaw(6_000, "pool");
    await sql`INSERT INTO tether.job (name, priority, tag, kwargs)
              SELECT 'sync_widget', 1, 'live', jsonb_build_object('id', w.id::text) FROM widget w WHERE w.owner = 'pool'`.execute(ctx.db);
    const drainer = new Drainer({ db: ctx.db, sink: ctx.sink, collections: [widgets], batchSize: 1000, concurrency: 3 });
    const total = await drainer.drainUntilEmpty();
    expect(total.error).toBeUndefined();
    expect(total.repaired).toBe(6_000);
    expect(await ctx.jobCount()).toBe(0);
  });
});
