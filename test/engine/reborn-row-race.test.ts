import { sql } from "kysely";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Drainer, verifyCollection, type Sink } from "@tether/core";
import { createEntryContext, entries, type EntryContext } from "../support/entries.js";

/**
 * A pass holding the job of a hard delete loads the row (absent), and before it reads the engine
 * the id lives again: inserted anew, its job drained and confirmed by another pass, which wrote
 * the new life's document. The first pass then meets that live document with no row loaded.
 * Runs once per sink.
 */
describe("a delete's job whose id lives again between the pass's load and its read of the engine", () => {
  let ctx: EntryContext;
  beforeAll(async () => {
    ctx = await createEntryContext();
  });
  afterAll(() => ctx.close());

  /** The context's sink, whose first fetchStates waits until `release` is called; `reading` resolves when it is called. */
  function gatedSink(inner: Sink) {
    let release!: () => void;
    let reading!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    const reached = new Promise<void>((r) => (reading = r));
    let first = true;
    const sink: Sink = {
      kind: inner.kind,
      ...(inner.fetchVersions ? { fetchVersions: (i: string, ids: readonly string[], o?: Parameters<Sink["fetchStates"]>[2]) => inner.fetchVersions!(i, ids, o) } : {}),
      ensureIndex: (i, m) => inner.ensureIndex(i, m),
      write: (i, ops, o) => inner.write(i, ops, o),
      summarize: (i, b, o) => inner.summarize(i, b, o),
      listStates: (i, r, o) => inner.listStates(i, r, o),
      fetchStates: async (i, ids, o) => {
        if (first) {
          first = false;
          reading();
          await gate;
        }
        return inner.fetchStates(i, ids, o);
      },
    };
    return { sink, release, reached };
  }

  it("leaves the new life's document as it is, confirmed as that row's, and no tombstone above it", async () => {
    await sql`INSERT INTO entry (id, body) OVERRIDING SYSTEM VALUE VALUES (41, 'first life')`.execute(ctx.db);
    await ctx.drain();
    await sql`DELETE FROM entry WHERE id = 41`.execute(ctx.db);
    expect(await ctx.jobCount()).toBe(1);

    const gated = gatedSink(ctx.sink);
    // Reads first (never writes blind): the pass loads the row, then waits at the engine read.
    const slow = new Drainer({ db: ctx.db, sink: gated.sink, collections: [entries], writeFirst: "never" });
    const pass = slow.drainOnce();
    await gated.reached;

    // The id lives again; another pass (the delete's job is claimed, so it takes the insert's) writes and confirms it.
    await sql`INSERT INTO entry (id, body) OVERRIDING SYSTEM VALUE VALUES (41, 'second life')`.execute(ctx.db);
    const other = await new Drainer({ db: ctx.db, sink: ctx.sink, collections: [entries] }).drainOnce();
    expect(other).toMatchObject({ claimed: 1, repaired: 1 });
    const row = (await ctx.row("41"))!;
    expect(await ctx.doc("41")).toMatchObject({ version: row.version, body: "second life", deleted: false });

    gated.release();
    expect((await pass).error).toBeUndefined();
    await ctx.drain();
    expect(await ctx.doc("41")).toMatchObject({ version: row.version, body: "second life", deleted: false });
    expect(await ctx.jobCount()).toBe(0);
    expect((await verifyCollection(ctx.db, ctx.sink, entries, { enqueue: false })).driftedTotal).toBe(0);
  });
});
