import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { sql } from "kysely";
import { createWriter, Drainer, verifyCollection, type Sink } from "@tether/core";
import type { TestContext } from "@tether/testkit";
import { annotations, createAnnotationContext } from "./support/annotation-context.js";
import { drainToEmpty } from "./support/drain.js";
import { waitFor } from "@tether/testkit";

/**
 * A write that commits between the drainer reading a row and reading its document makes the
 * document look "ahead" of the row the drainer holds. Found by the soak: the drainer took that
 * for an edit made behind tether's back, leapfrogged the version and wrote its stale copy —
 * resurrecting a deleted annotation, or hiding an edit behind an equal version.
 */
describe("a write committing while the drainer repairs the same annotation", () => {
  let ctx: TestContext;
  const writer = () => createWriter({ sink: ctx.sink, graceMs: 0 });

  /** A sink that runs `meanwhile` once, just before the drainer's first read of the downstream. */
  function interleaved(meanwhile: () => Promise<void>): Sink {
    let done = false;
    const inner = ctx.sink;
    return {
      kind: inner.kind,
      ensureIndex: (i, m) => inner.ensureIndex(i, m),
      fetchStates: async (i, ids, o) => {
        if (!done) {
          done = true;
          await meanwhile();
        }
        return inner.fetchStates(i, ids, o);
      },
      write: (i, ops, o) => inner.write(i, ops, o),
      summarize: (i, b, o) => inner.summarize(i, b, o),
      listStates: (i, r, o) => inner.listStates(i, r, o),
    };
  }

  async function createUnsynced(text: string): Promise<string> {
    const { row } = await writer().createWithJob(ctx.db, annotations, { userid: "acct:race@example.com", target_uri: "https://example.com/r", text }, { directSync: false });
    return String((row as { id: string }).id);
  }

  beforeAll(async () => {
    ctx = await createAnnotationContext();
  });
  beforeEach(async () => {
    await sql`DELETE FROM tether.job`.execute(ctx.db);
  });
  afterAll(() => ctx.close());

  it("does not bring back an annotation deleted meanwhile", async () => {
    const id = await createUnsynced("about to be deleted");
    const sink = interleaved(async () => {
      await writer().deleteWithJob(ctx.db, annotations, id);
      // Its direct sync has a tight timeout; make sure the tombstone is there, as it usually is.
      await waitFor(async () => (await ctx.sink.fetchStates(annotations.index, [id])).get(id)?.deleted === true, { what: "the tombstone" });
    });
    await new Drainer({ db: ctx.db, sink, collections: [annotations] }).drainOnce();
    await drainToEmpty(new Drainer({ db: ctx.db, sink: ctx.sink, collections: [annotations] }), ctx.db);

    const state = (await ctx.sink.fetchStates(annotations.index, [id])).get(id);
    const row = (await sql<{ version: string; deleted: boolean }>`SELECT version::text, deleted_at IS NOT NULL AS deleted FROM annotation WHERE id = ${id}`.execute(ctx.db)).rows[0]!;
    expect(row.deleted).toBe(true);
    expect(state?.deleted).toBe(true);
    expect(state!.version).toBeGreaterThanOrEqual(Number(row.version));
  });

  it("does not overwrite an edit committed meanwhile with the older content", async () => {
    const id = await createUnsynced("first words");
    const sink = interleaved(async () => {
      await writer().updateWithJob(ctx.db, annotations, id, { text: "second thoughts" });
      await waitFor(async () => (await ctx.sink.fetchStates(annotations.index, [id])).get(id)?.version === 2, { what: "the edit's document" });
    });
    await new Drainer({ db: ctx.db, sink, collections: [annotations] }).drainOnce();
    await drainToEmpty(new Drainer({ db: ctx.db, sink: ctx.sink, collections: [annotations] }), ctx.db);

    const doc = await ctx.sink.client.get<{ text: string }>({ index: ctx.sink.indexName(annotations.index), id });
    const row = (await sql<{ version: string; text: string }>`SELECT version::text, text FROM annotation WHERE id = ${id}`.execute(ctx.db)).rows[0]!;
    expect(doc._source?.text).toBe("second thoughts");
    expect(row.text).toBe("second thoughts");
    expect(doc._version).toBe(Number(row.version));
    expect(await verifyCollection(ctx.db, ctx.sink, annotations, { enqueue: false })).toMatchObject({ driftedTotal: 0 });
  });

  it("heals a live document left at the deleted row's own version, which a tombstone at that version could not replace", async () => {
    const id = await createUnsynced("left behind");
    await sql`UPDATE annotation SET deleted_at = now(), version = 2 WHERE id = ${id}`.execute(ctx.db);
    await ctx.sink.write(annotations.index, [{ kind: "index", id, version: 2, document: { text: "left behind" } }]);
    await drainToEmpty(new Drainer({ db: ctx.db, sink: ctx.sink, collections: [annotations] }), ctx.db, { timeoutMs: 20_000 });
    expect((await ctx.sink.fetchStates(annotations.index, [id])).get(id)).toEqual({ version: 3, deleted: true });
  });
});
