import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { sql } from "kysely";
import { Drainer, type Sink } from "@tether/core";
import { waitFor } from "@tether/testkit";
import { createWidgetContext, widgets, type WidgetContext } from "../support/widgets.js";

/** The test's sink: each bulk waits until the test releases it (or opens the gate for all). */
function gatedSink(inner: Sink, log: string[]): Sink & { held: (() => void)[]; open(): void } {
  let opened = false;
  const s = {
    kind: inner.kind,
    held: [] as (() => void)[],
    open: () => {
      opened = true;
      for (const release of s.held) release();
    },
    ensureIndex: (i, m) => inner.ensureIndex(i, m),
    fetchStates: (i, ids, o) => inner.fetchStates(i, ids, o),
    write: async (i, ops, o) => {
      log.push("bulk");
      if (!opened) await new Promise<void>((resolve) => s.held.push(resolve));
      return inner.write(i, ops, o);
    },
    summarize: (i, b, o) => inner.summarize(i, b, o),
    listStates: (i, r, o) => inner.listStates(i, r, o),
  } satisfies Sink & { held: (() => void)[]; open(): void };
  return s;
}

describe("a drainer with two passes in flight", () => {
  let ctx: WidgetContext;
  beforeAll(async () => {
    ctx = await createWidgetContext({ poolSize: 3 });
  });
  afterAll(() => ctx.close());

  const locked = async () => {
    const r = await sql<{ n: string }>`SELECT count(*) AS n FROM tether.job WHERE id NOT IN (SELECT id FROM tether.job FOR UPDATE SKIP LOCKED)`.execute(ctx.db);
    return Number(r.rows[0]!.n);
  };

  it("claims and loads the next batch while a bulk is in flight, one batch ahead, and keeps two in flight", async () => {
    await ctx.insertRaw(4_000, "pipeline");
    await sql`INSERT INTO tether.job (name, priority, tag, kwargs)
              SELECT 'sync_widget', 1, 'live', jsonb_build_object('id', w.id::text) FROM widget w WHERE w.owner = 'pipeline'`.execute(ctx.db);
    const log: string[] = [];
    const sink = gatedSink(ctx.sink, log);
    const drainer = new Drainer({ db: ctx.db, sink, collections: [widgets], batchSize: 1_000, concurrency: 2, writeFirst: "always" });
    drainer.on("claimed", (ids) => log.push(`claim ${ids.length}`));
    const total = drainer.drainUntilEmpty();

    try {
      // The second pass starts once the first has its batch loaded and is in the engine: its
      // claim and row load (Postgres) run under the first pass's bulk.
      await waitFor(() => sink.held.length === 2, { what: "two bulks in flight" });
      expect(log).toEqual(["claim 1000", "bulk", "claim 1000", "bulk"]);
      // No third pass while two are in flight; each holds its own claim (transaction, connection).
      expect(await locked()).toBe(2_000);

      // The first pass ends: the third starts at once, while the second is still in its bulk.
      sink.held[0]!();
      await waitFor(() => sink.held.length === 3, { what: "the third pass's bulk" });
      expect(log.slice(4)).toEqual(["claim 1000", "bulk"]);
      expect(await locked()).toBe(2_000);
      expect(await ctx.jobCount()).toBe(3_000);

    } finally {
      // Also when an expectation failed: no pass may stay held past the test.
      sink.open();
    }
    const r = await total;
    expect(r.error).toBeUndefined();
    expect(r.repaired).toBe(4_000);
    expect(await ctx.jobCount()).toBe(0);
  });
});
