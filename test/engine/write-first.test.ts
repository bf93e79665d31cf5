import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { sql } from "kysely";
import { Drainer, insertJobs, type Sink } from "@tether/core/internal";
import { createWidgetContext, widgets, type WidgetContext } from "../support/widgets.js";

/** Records which downstream calls a pass makes, in order, passing them through to the real sink. */
function recordingSink(inner: Sink & Required<Pick<Sink, "fetchVersions">>): Sink & { calls: string[] } {
  const calls: string[] = [];
  return {
    kind: inner.kind,
    calls,
    ensureIndex: (i, m) => inner.ensureIndex(i, m),
    fetchStates: (i, ids, o) => (calls.push(`fetchStates ${ids.length}`), inner.fetchStates(i, ids, o)),
    fetchVersions: (i, ids, o) => (calls.push(`fetchVersions ${ids.length}`), inner.fetchVersions(i, ids, o)),
    write: (i, ops, o) => (calls.push(`write ${ops.length}`), inner.write(i, ops, o)),
    summarize: (i, b, o) => inner.summarize(i, b, o),
    listStates: (i, r, o) => inner.listStates(i, r, o),
  };
}

describe("writing first in the drainer", () => {
  let ctx: WidgetContext;
  const enqueue = (ids: string[]) => insertJobs(ctx.db, ids.map((entityId) => ({ name: "sync_widget", entityId, priority: 1, tag: "reindex", delayMs: 0 })));
  beforeAll(async () => {
    ctx = await createWidgetContext();
  });
  beforeEach(async () => {
    await sql`DELETE FROM tether.job`.execute(ctx.db);
  });
  afterAll(() => ctx.close());

  it("switches to writing first after a pass whose pre-read changed no write, and reads back only what it wrote", async () => {
    const ids = await ctx.insertRaw(20);
    await enqueue(ids);
    const sink = recordingSink(ctx.sink);
    const drainer = new Drainer({ db: ctx.db, sink, collections: [widgets], batchSize: 10 });
    expect(await drainer.drainOnce()).toMatchObject({ claimed: 10, repaired: 10 });
    expect(sink.calls.splice(0)).toEqual(["fetchStates 10", "write 10", "fetchVersions 10"]);
    expect(await drainer.drainOnce()).toMatchObject({ claimed: 10, repaired: 10 });
    // A blind write is read back whole: the engine might have held that version already, with another body.
    expect(sink.calls.splice(0)).toEqual(["write 10", "fetchStates 10"]);
    const states = await ctx.sink.fetchStates("widgets", ids);
    expect([...states.values()].every((s) => s.version === 1 && !s.deleted)).toBe(true);
  });

  it("reads and decides through the matrix what a blind write was refused for, and goes back to reading first when most were refused", async () => {
    const ids = await ctx.insertRaw(10);
    const [ahead, ...rest] = ids;
    // Six of ten already current, one edited downstream to a newer version, three missing.
    const current = await sql<{ id: string; owner: string; title: string; body: string | null }>`SELECT id::text, owner, title, body FROM widget WHERE id = ANY(${rest.slice(0, 6)}::bigint[])`.execute(ctx.db);
    await ctx.sink.write("widgets", current.rows.map((r) => ({ kind: "index" as const, id: r.id, version: 1, document: widgets.toDocument(r as never) })));
    await ctx.sink.write("widgets", [{ kind: "index", id: ahead!, version: 7, document: { owner: "edited behind our back" } }]);
    const sink = recordingSink(ctx.sink);
    const drainer = new Drainer({ db: ctx.db, sink, collections: [widgets], writeFirst: "always" });
    await enqueue(ids);
    expect(await drainer.drainOnce()).toMatchObject({ claimed: 10, up_to_date: 6, repaired: 3, raised: 1, retried: 0 });
    // The blind write of all ten, the read of the seven refused; the one ahead has its row raised
    // past it, committed before the engine is sent the new version.
    expect(sink.calls.splice(0)).toEqual(["write 10", "fetchStates 7", "fetchStates 3"]);
    expect((await ctx.sink.fetchStates("widgets", [ahead!])).get(ahead!)).toMatchObject({ version: 7, deleted: false });
    const row = await sql<{ version: string }>`SELECT version FROM widget WHERE id = ${ahead}`.execute(ctx.db);
    expect(row.rows[0]!.version).toBe("8");
    // The next pass writes it at the raised version.
    expect(await drainer.drainOnce()).toMatchObject({ claimed: 1, repaired: 1, raised: 0 });
    expect(sink.calls.splice(0)).toEqual(["write 1", "fetchStates 1"]);
    expect((await ctx.sink.fetchStates("widgets", [ahead!])).get(ahead!)).toMatchObject({ version: 8, deleted: false });

    // "auto" in write-first mode meets the same: mostly refused, so its next pass reads first.
    const auto = new Drainer({ db: ctx.db, sink, collections: [widgets], batchSize: 10 });
    const fresh = await ctx.insertRaw(10);
    await enqueue(fresh);
    await auto.drainOnce(); // reads first, finds all ten missing: switches to writing first
    await enqueue(ids);
    sink.calls.splice(0);
    expect(await auto.drainOnce()).toMatchObject({ claimed: 10, up_to_date: 10 });
    expect(sink.calls.splice(0)).toEqual(["write 10", "fetchStates 10"]);
    await enqueue(ids);
    expect(await auto.drainOnce()).toMatchObject({ claimed: 10, up_to_date: 10 });
    expect(sink.calls.splice(0)).toEqual(["fetchStates 10"]);
  });
});
