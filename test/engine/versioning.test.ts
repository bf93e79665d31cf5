import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createWriter } from "@tether/core";
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
    await writer.deleteWithJob(ctx.db, widgets, id);
    // The direct syncs of v1 and v2 arrive late, after the tombstone (v3).
    const late = await writer.syncNow(widgets, [...created.changes, ...edited.changes].slice(0, 1));
    const late2 = await writer.syncNow(widgets, edited.changes);
    expect(late).toBe("ok"); // a conflict is not an error: the newer tombstone simply wins
    expect(late2).toBe("ok");
    const state = (await ctx.sink.fetchStates("widgets", [id])).get(id);
    expect(state).toEqual({ version: 3, deleted: true });
  });

  it("does not let a forced rewrite of an older version win either", async () => {
    const id = "5002";
    await ctx.sink.write("widgets", [{ kind: "index", id, version: 7, document: { owner: "a", title: "v7" } }]);
    const forced = await ctx.sink.write("widgets", [{ kind: "index", id, version: 6, document: { owner: "a", title: "v6" }, force: true }]);
    expect(forced[0]!.status).toBe("conflict");
    expect((await ctx.sink.fetchStates("widgets", [id])).get(id)?.version).toBe(7);
  });
});
