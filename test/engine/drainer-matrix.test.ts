import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { sql } from "kysely";
import { Drainer, insertJobs, type Sink, type SinkOperation } from "@tether/core/internal";
import { createWidgetContext, widgets, type WidgetContext } from "../support/widgets.js";

/** Counts the operations the drainer sends downstream, passing them through to the real sink. */
function countingSink(inner: Sink): Sink & { ops: SinkOperation[] } {
  const ops: SinkOperation[] = [];
  return {
    kind: inner.kind,
    ops,
    ensureIndex: (i, m) => inner.ensureIndex(i, m),
    fetchStates: (i, ids, o) => inner.fetchStates(i, ids, o),
    write: (i, o, opts) => {
      ops.push(...o);
      return inner.write(i, o, opts);
    },
    summarize: (i, b, o) => inner.summarize(i, b, o),
    listStates: (i, r, o) => inner.listStates(i, r, o),
  };
}

describe("the drainer's verification matrix", () => {
  let ctx: WidgetContext;
  let index: string;
  const state = async (id: string) => (await ctx.sink.fetchStates("widgets", [id])).get(id);
  const enqueue = (ids: string[], extra: { force?: boolean; version?: number } = {}) =>
    insertJobs(ctx.db, ids.map((entityId) => ({ name: "sync_widget", entityId, priority: 1, tag: "live", delayMs: 0, ...extra })));
  const pending = async (ids: string[]) =>
    Number((await sql<{ n: string }>`SELECT count(*) AS n FROM tether.job WHERE kwargs->>'id' = ANY(${ids}::text[])`.execute(ctx.db)).rows[0]!.n);

  beforeAll(async () => {
    ctx = await createWidgetContext();
    index = ctx.sink.indexName("widgets");
  });
  beforeEach(async () => {
    await sql`DELETE FROM tether.job`.execute(ctx.db);
  });
  afterAll(() => ctx.close());

  it("confirms an entity already equal on both sides without writing", async () => {
    const [id] = await ctx.insertRaw(1);
    await ctx.sink.write("widgets", [{ kind: "index", id: id!, version: 1, document: { owner: "raw", title: "w1", body: null } }]);
    await enqueue([id!]);
    const sink = countingSink(ctx.sink);
    const r = await new Drainer({ db: ctx.db, sink, collections: [widgets] }).drainOnce();
    expect(r).toMatchObject({ claimed: 1, up_to_date: 1, repaired: 0 });
    expect(sink.ops).toHaveLength(0);
    expect(await pending([id!])).toBe(0);
  });

  it("repairs a missing document and confirms it by reading it back in the same pass", async () => {
    const [id] = await ctx.insertRaw(1);
    await enqueue([id!]);
    const r = await new Drainer({ db: ctx.db, sink: ctx.sink, collections: [widgets] }).drainOnce();
    expect(r).toMatchObject({ claimed: 1, repaired: 1 });
    expect(await state(id!)).toMatchObject({ version: 1, deleted: false });
    expect(await pending([id!])).toBe(0);
  });

  it("repairs a stale document (an older version), not just a missing one", async () => {
    const [id] = await ctx.insertRaw(1);
    await ctx.sink.write("widgets", [{ kind: "index", id: id!, version: 1, document: { owner: "raw", title: "old" } }]);
    await sql`UPDATE widget SET title = 'new', version = 4 WHERE id = ${id}`.execute(ctx.db);
    await enqueue([id!]);
    const r = await new Drainer({ db: ctx.db, sink: ctx.sink, collections: [widgets] }).drainOnce();
    expect(r.repaired).toBe(1);
    const doc = await ctx.sink.client.get<{ title: string }>({ index, id: id! });
    expect(doc._version).toBe(4);
    expect(doc._source?.title).toBe("new");
  });

  it("tombstones a soft-deleted entity that is still live downstream", async () => {
    const [id] = await ctx.insertRaw(1);
    await ctx.sink.write("widgets", [{ kind: "index", id: id!, version: 1, document: { owner: "raw", title: "w" } }]);
    await sql`UPDATE widget SET deleted_at = now(), version = 2 WHERE id = ${id}`.execute(ctx.db);
    await enqueue([id!]);
    const r = await new Drainer({ db: ctx.db, sink: ctx.sink, collections: [widgets] }).drainOnce();
    expect(r.deleted_downstream).toBe(1);
    expect(await state(id!)).toEqual({ version: 2, deleted: true });
  });

  it("replaces the document of a hard-deleted entity with a tombstone at the delete's version and confirms it", async () => {
    const [id] = await ctx.insertRaw(1);
    await ctx.sink.write("widgets", [{ kind: "index", id: id!, version: 1, document: { owner: "raw", title: "w" } }]);
    await sql`DELETE FROM widget WHERE id = ${id}`.execute(ctx.db);
    await enqueue([id!], { version: 2 });
    const r = await new Drainer({ db: ctx.db, sink: ctx.sink, collections: [widgets] }).drainOnce();
    expect(r.deleted_downstream).toBe(1);
    expect(await state(id!)).toEqual({ version: 2, deleted: true });
    expect(await pending([id!])).toBe(0);
  });

  it("confirms an entity gone on both sides", async () => {
    await enqueue(["987654321"]);
    const r = await new Drainer({ db: ctx.db, sink: ctx.sink, collections: [widgets] }).drainOnce();
    expect(r).toMatchObject({ claimed: 1, up_to_date: 1 });
  });

  it("never confirms a document at the row's version that holds another body: rewrites it past itself (a version handed out twice)", async () => {
    const [id] = await ctx.insertRaw(1);
    // What a restored Postgres does: version 1 handed out again, and the engine holds another body at it.
    await ctx.sink.write("widgets", [{ kind: "index", id: id!, version: 1, document: { owner: "raw", title: "written before the restore" } }]);
    await enqueue([id!]);
    const drainer = new Drainer({ db: ctx.db, sink: ctx.sink, collections: [widgets] });
    expect(await drainer.drainOnce()).toMatchObject({ up_to_date: 0, raised: 1 });
    expect(await drainer.drainOnce()).toMatchObject({ repaired: 1 });
    const doc = await ctx.sink.client.get<{ title: string }>({ index, id: id! });
    expect(doc._source?.title).toBe("w1");
    expect(doc._version).toBe(2);
    expect(await pending([id!])).toBe(0);
  });

  it("rewrites a forced entity even when it looks current, and still verifies before deleting the job", async () => {
    const [id] = await ctx.insertRaw(1);
    // Edited behind tether's back at the same version, without a content hash: it looks current.
    await ctx.sink.client.index({ index, id: id!, version: 1, version_type: "external", document: { owner: "raw", title: "tampered", tether: { version: 1, deleted: false } } });
    await enqueue([id!], { force: true });
    const sink = countingSink(ctx.sink);
    const r = await new Drainer({ db: ctx.db, sink, collections: [widgets] }).drainOnce();
    expect(r.forced).toBe(1);
    expect(sink.ops).toHaveLength(1);
    const doc = await ctx.sink.client.get<{ title: string }>({ index, id: id! });
    expect(doc._source?.title).toBe("w1");
    expect(doc._version).toBe(1);
  });

  it("keeps a forced job whose rewrite was not confirmed on read-back", async () => {
    const [id] = await ctx.insertRaw(1);
    await enqueue([id!], { force: true });
    const inner = ctx.sink;
    const lying: Sink = {
      ...countingSink(inner),
      // Claims success but writes nothing: what the anchor trusted and we do not.
      write: async (_i, ops) => ops.map((op) => ({ id: op.id, status: "ok" as const })),
    };
    const r = await new Drainer({ db: ctx.db, sink: lying, collections: [widgets] }).drainOnce();
    expect(r).toMatchObject({ forced: 0, retried: 1 });
    expect(await pending([id!])).toBe(1);
    const job = await sql<{ last_error: string; attempts: number }>`SELECT last_error, attempts FROM tether.job`.execute(ctx.db);
    expect(job.rows[0]!.last_error).toMatch(/not confirmed on read-back/);
    expect(job.rows[0]!.attempts).toBe(1);
  });

  it("collapses several jobs for one entity into one write and confirms them all together", async () => {
    const [id] = await ctx.insertRaw(1);
    await enqueue([id!, id!, id!, id!]);
    const sink = countingSink(ctx.sink);
    const r = await new Drainer({ db: ctx.db, sink, collections: [widgets] }).drainOnce();
    expect(r).toMatchObject({ claimed: 4, repaired: 4 });
    expect(sink.ops).toHaveLength(1);
    expect(await pending([id!])).toBe(0);
  });

  it("leapfrogs the Postgres version when the document was edited behind its back: the bump commits in one pass, the next writes at it", async () => {
    const [id] = await ctx.insertRaw(1);
    await ctx.sink.write("widgets", [{ kind: "index", id: id!, version: 1, document: { owner: "raw", title: "w1" } }]);
    // A plain client write: internal versioning bumps _version past what Postgres has.
    await ctx.sink.client.index({ index, id: id!, document: { owner: "evil", title: "edited" } });
    await enqueue([id!]);
    const drainer = new Drainer({ db: ctx.db, sink: ctx.sink, collections: [widgets] });
    const version = async () => Number((await sql<{ version: string }>`SELECT version FROM widget WHERE id = ${id}`.execute(ctx.db)).rows[0]!.version);
    const first = await drainer.drainOnce();
    // The row is raised past the edit and the job is due again, no attempt counted; the engine still holds the edit.
    expect(first).toMatchObject({ claimed: 1, raised: 1, retried: 0, repaired: 0 });
    expect(await version()).toBe(3);
    expect((await ctx.sink.client.get<{ title: string }>({ index, id: id! }))._source?.title).toBe("edited");
    const job = await sql<{ attempts: number; due: boolean }>`SELECT attempts, scheduled_at <= clock_timestamp() AS due FROM tether.job`.execute(ctx.db);
    expect(job.rows).toEqual([{ attempts: 0, due: true }]);
    const second = await drainer.drainOnce();
    expect(second).toMatchObject({ claimed: 1, repaired: 1 });
    const doc = await ctx.sink.client.get<{ title: string }>({ index, id: id! });
    expect(doc._source?.title).toBe("w1");
    expect(doc._version).toBe(await version());
    expect(doc._version).toBe(3);
  });
});
