import { sql } from "kysely";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { traceEntity } from "@tether/admin";
import { Drainer, enableCapture, parkJobs, pauseName, queueStats, resumeName, verifyCollection } from "@tether/core/internal";
import { createShopContext, type ShopContext } from "../support/shop-context.js";
import { shopProducts } from "../support/shop.js";

/**
 * What operators see of documents from several tables: why a product is (or will be) re-synced
 * when its category changes, and which fan-out did it.
 */

let ctx: ShopContext;
beforeAll(async () => {
  ctx = await createShopContext();
  await enableCapture(ctx.db, shopProducts, { graceMs: 0 });
});
afterAll(() => ctx.close());

/** A drainer expanding fan-outs 10 documents per transaction. */
const drainer = () => new Drainer({ db: ctx.db, sink: ctx.sink, collections: [shopProducts], fanoutChunkSize: 10 });
const trace = (id: string) => traceEntity(ctx.db, ctx.sink, shopProducts, id);

/** A category with `n` products in it, all drained: their documents say its name. */
async function categoryWithProducts(name: string, n: number): Promise<{ category: string; ids: string[] }> {
  const category = (await sql<{ id: string }>`INSERT INTO shop_category (name) VALUES (${name}) RETURNING id::text`.execute(ctx.db)).rows[0]!.id;
  const ids = (
    await sql<{ id: string }>`INSERT INTO shop_product (name, category_id) SELECT ${name} || ' ' || g, ${category}::bigint FROM generate_series(1, ${n}::int) g RETURNING id::text`.execute(ctx.db)
  ).rows.map((r) => r.id);
  expect((await drainer().drainUntilEmpty()).error).toBeUndefined();
  return { category, ids };
}

const fanoutJobOf = async (category: string) =>
  (await sql<{ id: string }>`SELECT id::text FROM tether.job WHERE name = ${shopProducts.fanoutJobName!} AND kwargs->>'link' = ${category}`.execute(ctx.db)).rows[0]!.id;

describe("the entity trace of a document read from several tables", () => {
  it("says why a product will be re-synced while its category's rename expands, which fan-out bumped it, and keeps that once the drain confirmed it", async () => {
    const { category, ids } = await categoryWithProducts("Boots", 25);
    const [first, last] = [ids[0]!, ids.at(-1)!];
    await sql`UPDATE shop_category SET name = 'Wellies' WHERE id = ${category}::bigint`.execute(ctx.db);
    const via = { table: "shop_category", column: "id", value: category };

    // Before any expansion: the change is pending, its fan-out queued and not yet at the product.
    let t = await trace(last);
    expect(t.fanout.links).toEqual([{ embed: "category", ...via }]);
    expect(t.fanout.pendingChanges).toEqual([expect.objectContaining({ embed: "category", ...via, fanout: "queued" })]);
    expect(t.fanout.fanouts).toEqual([expect.objectContaining({ embed: "category", link: category, done: 0, total: null, attempts: 0, state: "due", reached: false })]);
    const fanout = t.fanout.fanouts[0]!.id;
    // The document was built from "Boots" at the row's version: it differs, and the trace says what will fix it.
    expect(t.verdict).toBe("content_differs");
    expect(t.explanation).toContain(`A change of shop_category.id = ${category} (embed category`);
    expect(t.explanation).toContain(`fan-out job ${fanout} (due, 0 of ? document(s) done, 0 failed attempt(s)) bumps it and enqueues its sync job when it gets there`);

    // One chunk of 10, with the sync lane paused so the jobs it enqueued wait.
    await pauseName(ctx.db, shopProducts.jobName, "trace test");
    expect((await drainer().drainOnce()).fanout).toMatchObject({ claimed: 1, expanded: 10, finished: 0, more: true });
    t = await trace(first);
    expect(t.fanout.fanouts).toEqual([expect.objectContaining({ id: fanout, done: 10, total: 25, reached: true })]);
    expect(t.pendingJobs).toEqual([expect.objectContaining({ tag: "fanout:category.update", priority: 10, via: { ...via, fanout } })]);
    expect(t.explanation).toContain(`enqueued by a change of shop_category.id = ${category} (fan-out job ${fanout})`);
    expect(t.explanation).toContain(`fan-out job ${fanout} (10 of 25 document(s) done, 0 failed attempt(s)) has bumped ${first} already`);
    expect(t.events[0]).toMatchObject({ kind: "enqueued", tag: "fanout:category.update", via: { ...via, fanout } });
    expect((await trace(last)).fanout.fanouts).toEqual([expect.objectContaining({ id: fanout, done: 10, total: 25, reached: false })]);

    // The queue's figures list the fan-out with its progress, and its work apart from live work.
    const q = await queueStats(ctx.db);
    expect(q.fanouts).toEqual([expect.objectContaining({ id: fanout, collection: "shop_product", embed: "category", link: category, done: 10, total: 25, state: "due" })]);
    expect(q).toMatchObject({ fanoutLength: 11, liveLength: 0 });

    await resumeName(ctx.db, shopProducts.jobName);
    expect((await drainer().drainUntilEmpty()).error).toBeUndefined();
    for (const id of [first, last]) {
      t = await trace(id);
      expect(t).toMatchObject({ verdict: "in_sync", pendingJobs: [], fanout: { pendingChanges: [], fanouts: [] } });
      expect(t.explanation).not.toContain("still to reach");
      // "Why was it rewritten?": the confirmed job's history keeps the row and the fan-out.
      expect(t.events.slice(0, 2)).toEqual([
        expect.objectContaining({ kind: "repaired", tag: "fanout:category.update", via: { ...via, fanout } }),
        expect.objectContaining({ kind: "enqueued", tag: "fanout:category.update", via: { ...via, fanout } }),
      ]);
    }
  });

  it("a direct embed's change (a stock row) names its row, without a fan-out", async () => {
    const { ids } = await categoryWithProducts("Socks", 1);
    await sql`INSERT INTO shop_stock (product_id, quantity) VALUES (${ids[0]!}::bigint, 4)`.execute(ctx.db);
    const t = await trace(ids[0]!);
    expect(t.pendingJobs).toEqual([expect.objectContaining({ tag: "fanout:stock.insert", via: { table: "shop_stock", column: "product_id", value: ids[0] } })]);
    expect(t.fanout.pendingChanges).toEqual([]);
    expect((await drainer().drainUntilEmpty()).error).toBeUndefined();
    expect((await trace(ids[0]!)).events[0]).toMatchObject({ kind: "repaired", via: { table: "shop_stock", column: "product_id", value: ids[0] } });
  });

  it("says when the fan-out of a pending change is parked or lost, and what to do about each", async () => {
    const { category, ids } = await categoryWithProducts("Hats", 3);
    await sql`UPDATE shop_category SET name = 'Caps' WHERE id = ${category}::bigint`.execute(ctx.db);
    await parkJobs(ctx.db, [{ id: await fanoutJobOf(category), error: "parked by an operator" }]);
    let t = await trace(ids[1]!);
    expect(t.fanout).toMatchObject({ pendingChanges: [{ value: category, fanout: "parked" }], fanouts: [] });
    expect(t.explanation).toContain("its fan-out job is parked (`tether parked list`); retry it once the cause is fixed");

    await sql`DELETE FROM tether.dead_job WHERE name = ${shopProducts.fanoutJobName!}`.execute(ctx.db);
    t = await trace(ids[1]!);
    expect(t.fanout).toMatchObject({ pendingChanges: [{ value: category, fanout: "lost" }], fanouts: [] });
    expect(t.explanation).toContain("no fan-out job is left to expand it: `tether verify` enqueues it again");
    expect((await verifyCollection(ctx.db, ctx.sink, shopProducts)).drifted.embedded).toBeGreaterThan(0);
    expect((await trace(ids[1]!)).fanout.pendingChanges).toEqual([expect.objectContaining({ fanout: "queued" })]);
    expect((await drainer().drainUntilEmpty()).error).toBeUndefined();
    expect(await trace(ids[1]!)).toMatchObject({ verdict: "in_sync", fanout: { pendingChanges: [] } });
  });
});
