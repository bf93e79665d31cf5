import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { sql } from "kysely";
import { Drainer, RetryableSinkError, type DrainResult, type Sink } from "@tether/core";
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
      // A call made past its deadline fails at once, as the real sink's does; a held one waits
      // for the test whatever its deadline.
      if (o?.signal?.aborted) throw new RetryableSinkError("bulk aborted: deadline");
      log.push("bulk");
      if (!opened) await new Promise<void>((resolve) => s.held.push(resolve));
      return inner.write(i, ops, o);
    },
    summarize: (i, b, o) => inner.summarize(i, b, o),
    listStates: (i, r, o) => inner.listStates(i, r, o),
  } satisfies Sink & { held: (() => void)[]; open(): void };
  return s;
}

describe("a drainer's passes, one batch ahead", () => {
  let ctx: WidgetContext;
  beforeAll(async () => {
    ctx = await createWidgetContext({ poolSize: 3 });
  });
  afterAll(() => ctx.close());

  const locked = async () => {
    const r = await sql<{ n: string }>`SELECT count(*) AS n FROM tether.job WHERE id NOT IN (SELECT id FROM tether.job FOR UPDATE SKIP LOCKED)`.execute(ctx.db);
    return Number(r.rows[0]!.n);
  };

  it("claim and load the next batch while a bulk is in flight, and write one after the other", async () => {
    await ctx.insertRaw(3_000, "pipeline");
    await sql`INSERT INTO tether.job (name, priority, tag, kwargs)
              SELECT 'sync_widget', 1, 'live', jsonb_build_object('id', w.id::text) FROM widget w WHERE w.owner = 'pipeline'`.execute(ctx.db);
    const log: string[] = [];
    const sink = gatedSink(ctx.sink, log);
    const drainer = new Drainer({ db: ctx.db, sink, collections: [widgets], batchSize: 1_000, concurrency: 1, writeFirst: "always" });
    drainer.on("claimed", (ids) => log.push(`claim ${ids.length}`));
    const total = drainer.drainUntilEmpty();

    try {
      // The second pass starts once the first has its batch loaded and is in the engine: its
      // claim and row load (Postgres) run under the first pass's bulk. Each holds its own claim
      // (transaction, connection); no third pass starts.
      await waitFor(() => sink.held.length === 1 && log.length === 3, { what: "the first bulk and the second claim" });
      expect(log).toEqual(["claim 1000", "bulk", "claim 1000"]);
      expect(await locked()).toBe(2_000);

      // The first pass's bulk is answered: the second takes its turn and writes while the first
      // reads back and confirms; once the first has committed the third claims, ahead again.
      sink.held[0]!();
      await waitFor(() => sink.held.length === 2 && log.length === 5, { what: "the second bulk and the third claim" });
      expect(log.slice(3)).toEqual(["bulk", "claim 1000"]);
      expect(await ctx.jobCount()).toBe(2_000);
      expect(await locked()).toBe(2_000);
    } finally {
      // Also when an expectation failed: no pass may stay held past the test.
      sink.open();
    }
    const r = await total;
    expect(r.error).toBeUndefined();
    expect(r.repaired).toBe(3_000);
    expect(await ctx.jobCount()).toBe(0);
  });

  it("keep a pass waiting for its turn within its deadline", async () => {
    await sql`DELETE FROM tether.job`.execute(ctx.db);
    await ctx.insertRaw(2_000, "deadline");
    await sql`INSERT INTO tether.job (name, priority, tag, kwargs)
              SELECT 'sync_widget', 1, 'live', jsonb_build_object('id', w.id::text) FROM widget w WHERE w.owner = 'deadline'`.execute(ctx.db);
    const log: string[] = [];
    const sink = gatedSink(ctx.sink, log);
    const drainer = new Drainer({ db: ctx.db, sink, collections: [widgets], batchSize: 1_000, concurrency: 1, deadlineMs: 1_000, sinkRetries: 0, writeFirst: "always" });
    const results: DrainResult[] = [];
    drainer.on("batch", (r) => results.push(r));
    const total = drainer.drainUntilEmpty({ maxPasses: 2 });
    try {
      // The first pass's bulk is held past every deadline; the second, loaded and waiting for
      // the turn, gives up at its own deadline and keeps its jobs for later.
      await waitFor(() => results.length === 1, { what: "the second pass to end" });
      expect(sink.held).toHaveLength(1);
      expect(results[0]).toMatchObject({ claimed: 1_000, retried: 1_000 });
    } finally {
      sink.open();
    }
    expect((await total).retried).toBe(2_000);
    expect(await ctx.jobCount()).toBe(2_000);
  });
});
