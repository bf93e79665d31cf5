import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createWriter, purgeTombstones, verifyCollection } from "@tether/core";
import { waitFor } from "@tether/testkit";
import type { EngineSink } from "@tether/search-sink";
import { createWidgetContext, widgets, type WidgetContext } from "../support/widgets.js";

// Runs once per sink (the vitest projects): the guarantee is the downstream's.
describe("version-aware writes", () => {
  let ctx: WidgetContext<EngineSink>;
  beforeAll(async () => {
    ctx = await createWidgetContext({ sink: "per-project" });
  });
  afterAll(() => ctx.close());

  it("never lets an older version overwrite a newer one, whatever order the writes arrive in", async () => {
    const id = "5001";
    const newer = await ctx.sink.write("widgets", [{ kind: "index", id, version: 5, document: { owner: "a", title: "v5" } }]);
    expect(newer[0]!.status).toBe("ok");
    const late = await ctx.sink.write("widgets", [{ kind: "index", id, version: 3, document: { owner: "a", title: "v3" } }]);
    expect(late[0]!.status).toBe("conflict");
    const doc = await ctx.raw.get("widgets", id);
    expect(doc.version).toBe(5);
    expect(doc.source?.title).toBe("v5");
  });

  it("never resurrects a deleted entity with a late write of an older version", async () => {
    // A generous timeout: the late syncs must arrive, however loaded the machine.
    const writer = createWriter({ sink: ctx.sink, directSyncTimeoutMs: 10_000 });
    const created = await writer.createWithJob(ctx.db, widgets, { owner: "z", title: "alive" });
    const id = created.changes[0]!.id;
    const edited = await writer.updateWithJob(ctx.db, widgets, id, { title: "edited" });
    const deleted = await writer.deleteWithJob(ctx.db, widgets, id);
    // The direct syncs of v1 and v2 arrive late, after the tombstone (v3).
    const late = await writer.syncNow(widgets, [...created.changes, ...edited.changes].slice(0, 1));
    const late2 = await writer.syncNow(widgets, edited.changes);
    expect(late).toBe("ok"); // a conflict is not an error: the newer tombstone simply wins
    expect(late2).toBe("ok");
    const state = (await ctx.sink.fetchStates("widgets", [id])).get(id);
    expect(state).toEqual({ version: Number((deleted.row as { version: string }).version), deleted: true });
  });

  it("keeps a hard delete after index.gc_deletes has passed (a tombstone, not a delete marker) until the retention purge", async () => {
    const writer = createWriter({ sink: ctx.sink, directSyncTimeoutMs: 10_000 });
    const index = ctx.sink.indexName("widgets");
    // The engine forgets its delete markers after 1 s instead of 60 s.
    const put = await fetch(`${ctx.downstreamUrl}/${index}/_settings`, {
      method: "PUT",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ index: { gc_deletes: "1s" } }),
    });
    expect(put.status).toBe(200);
    // The document the first test wrote without a row would be a ghost to verify below.
    await ctx.sink.write("widgets", [{ kind: "delete", id: "5001", version: 100 }]);

    const created = await writer.createWithJob(ctx.db, widgets, { owner: "gc", title: "alive" });
    const id = created.changes[0]!.id;
    const edited = await writer.updateWithJob(ctx.db, widgets, id, { title: "edited" });
    const gone = await writer.deleteWithJob(ctx.db, widgets, id, { hard: true });
    expect(gone.sync).toBe("ok");
    const tombstone = gone.changes[0]!.deletedVersion!;
    expect((await ctx.sink.fetchStates("widgets", [id])).get(id)).toEqual({ version: tombstone, deleted: true });

    // The control: documents removed the old way (a versioned delete) at the same moment. Once one
    // of them takes a late older write again, the engine has forgotten that delete's marker.
    const probes = Array.from({ length: 60 }, (_, i) => `gc-probe-${i}`);
    await ctx.sink.write("widgets", probes.map((p) => ({ kind: "index" as const, id: p, version: 1, document: { owner: "gc", title: "probe" } })));
    const removed = await ctx.sink.write("widgets", probes.map((p) => ({ kind: "delete" as const, id: p, version: 2 })));
    expect(removed.every((r) => r.status === "ok")).toBe(true);
    let probe = 0;
    await waitFor(
      async () => {
        await fetch(`${ctx.downstreamUrl}/${index}/_refresh`, { method: "POST" });
        const [late] = await ctx.sink.write("widgets", [{ kind: "index", id: probes[probe++ % probes.length]!, version: 1, document: { owner: "gc", title: "resurrected" } }]);
        return late!.status === "ok";
      },
      { what: "index.gc_deletes to pass (a plain delete no longer refuses an older write)", timeoutMs: 60_000, intervalMs: 300 },
    );

    // (The control's resurrected probe is a ghost of its own: out of the way.)
    await ctx.sink.write("widgets", probes.map((p) => ({ kind: "delete" as const, id: p, version: 10 })));

    // The hard-deleted widget's older versions are still refused: its tombstone holds its own version.
    for (const version of [created, edited].map((w) => Number((w.row as { version: string }).version))) {
      const [late] = await ctx.sink.write("widgets", [{ kind: "index", id, version, document: { owner: "gc", title: `late v${version}` } }]);
      expect(late!.status).toBe("conflict");
    }
    expect((await ctx.sink.fetchStates("widgets", [id])).get(id)).toEqual({ version: tombstone, deleted: true });
    // No search for live documents returns it, and the drainer confirms the delete's job.
    await ctx.sink.refreshIndex("widgets");
    const live = await ctx.sink.searchIds("widgets", { query: { bool: { filter: [{ ids: { values: [id] } }, { term: { "tether.deleted": false } }] } } }, { timeoutMs: 5_000 });
    expect(live.ids).toEqual([]);
    const report = await verifyCollection(ctx.db, ctx.sink, widgets, { enqueue: false });
    expect(report.driftedTotal, JSON.stringify(report.samples)).toBe(0);

    // The retention purge: a young tombstone stays; past the retention it goes.
    const young = await purgeTombstones(ctx.sink, [widgets], { retentionMs: 3_600_000 });
    expect(young).toEqual([{ collection: widgets.name, found: 0, purged: 0, skipped: 0 }]);
    const old = await purgeTombstones(ctx.sink, [widgets], { retentionMs: 0 });
    expect(old[0]!.purged).toBeGreaterThanOrEqual(1);
    expect((await ctx.sink.fetchStates("widgets", [id])).has(id)).toBe(false);
    expect((await verifyCollection(ctx.db, ctx.sink, widgets, { enqueue: false })).driftedTotal).toBe(0);
  });

  it("does not let a forced rewrite of an older version win either", async () => {
    const id = "5002";
    await ctx.sink.write("widgets", [{ kind: "index", id, version: 7, document: { owner: "a", title: "v7" } }]);
    const forced = await ctx.sink.write("widgets", [{ kind: "index", id, version: 6, document: { owner: "a", title: "v6" }, force: true }]);
    expect(forced[0]!.status).toBe("conflict");
    expect((await ctx.sink.fetchStates("widgets", [id])).get(id)?.version).toBe(7);
  });
});
