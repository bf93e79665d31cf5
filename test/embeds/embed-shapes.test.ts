import { sql } from "kysely";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { Drainer, enableCapture, verifyCollection } from "@tether/core/internal";
import { loadShopProducts, shopProducts } from "../support/shop.ts";
import { createShopContext, type ShopContext } from "../support/shop-context.ts";

/**
 * Every shape of embed, through plain SQL with capture on: each change reaches exactly the
 * documents that read the changed row, and the documents end equal to what `load` +
 * `toDocument` build from the rows.
 */

let ctx: ShopContext;
beforeAll(async () => {
  ctx = await createShopContext({ sink: "per-project" });
  await enableCapture(ctx.db, shopProducts, { graceMs: 0 });
});
afterAll(() => ctx.close());

const drain = async () => {
  const r = await new Drainer({ db: ctx.db, sink: ctx.sink, collections: [shopProducts] }).drainUntilEmpty();
  expect(r.error).toBeUndefined();
  return r;
};
const one = async (q: ReturnType<typeof sql<{ id: string }>>) => (await q.execute(ctx.db)).rows[0]!.id;
const doc = async (id: string) => (await ctx.raw.get(shopProducts.index, id)).source;

/** Every live product's document equals what its rows build now. */
async function expectConverged(): Promise<void> {
  const ids = (await sql<{ id: string }>`SELECT id::text FROM shop_product WHERE deleted_at IS NULL`.execute(ctx.db)).rows.map((r) => r.id);
  const rows = await loadShopProducts(ctx.db, ids);
  for (const row of rows) expect(await doc(String(row.id))).toMatchObject(shopProducts.toDocument(row));
  const report = await verifyCollection(ctx.db, ctx.sink, shopProducts);
  expect(report.driftedTotal, JSON.stringify(report)).toBe(0);
}

let product: string;
let other: string;
beforeEach(async () => {
  // Plain DELETEs, captured: the documents of the test before become tombstones (TRUNCATE is not captured).
  for (const t of ["shop_order_line", "shop_order", "shop_product_tag", "shop_tag", "shop_stock", "shop_product", "shop_category"]) await sql`DELETE FROM ${sql.table(t)}`.execute(ctx.db);
  const c = await one(sql<{ id: string }>`INSERT INTO shop_category (name) VALUES ('Tools') RETURNING id::text AS id`);
  product = await one(sql<{ id: string }>`INSERT INTO shop_product (name, category_id) VALUES ('hammer', ${c}::bigint) RETURNING id::text AS id`);
  other = await one(sql<{ id: string }>`INSERT INTO shop_product (name, category_id) VALUES ('saw', ${c}::bigint) RETURNING id::text AS id`);
  await drain();
});

describe("embeds, shape by shape, by plain SQL", () => {
  it("a join table: linking, renaming the tag, unlinking and deleting the tag each reach the documents that read it", async () => {
    const tag = await one(sql<{ id: string }>`INSERT INTO shop_tag (name) VALUES ('sale') RETURNING id::text AS id`);
    await sql`INSERT INTO shop_product_tag (product_id, tag_id) VALUES (${product}::bigint, ${tag}::bigint)`.execute(ctx.db);
    await drain();
    expect(await doc(product)).toMatchObject({ tags: ["sale"] });
    expect(await doc(other)).toMatchObject({ tags: [] });

    await sql`UPDATE shop_tag SET name = 'clearance' WHERE id = ${tag}::bigint`.execute(ctx.db);
    expect(await ctx.jobs()).toEqual({ fanout_shop_product: 1 });
    await drain();
    expect(await doc(product)).toMatchObject({ tags: ["clearance"] });

    await sql`INSERT INTO shop_product_tag (product_id, tag_id) VALUES (${other}::bigint, ${tag}::bigint)`.execute(ctx.db);
    await sql`DELETE FROM shop_product_tag WHERE product_id = ${product}::bigint`.execute(ctx.db);
    await drain();
    expect(await doc(product)).toMatchObject({ tags: [] });
    expect(await doc(other)).toMatchObject({ tags: ["clearance"] });

    // The tag goes; the join row stays behind, dangling: the document no longer names it.
    await sql`DELETE FROM shop_tag WHERE id = ${tag}::bigint`.execute(ctx.db);
    await drain();
    expect(await doc(other)).toMatchObject({ tags: [] });
    await expectConverged();
  });

  it("two levels: an order line reaches its product, an order's status reaches every product of its lines, and a deleted order reaches them too", async () => {
    const order = await one(sql<{ id: string }>`INSERT INTO shop_order (status) VALUES ('open') RETURNING id::text AS id`);
    await sql`INSERT INTO shop_order_line (order_id, product_id, quantity) VALUES (${order}::bigint, ${product}::bigint, 2), (${order}::bigint, ${other}::bigint, 3)`.execute(ctx.db);
    await drain();
    expect(await doc(product)).toMatchObject({ open_quantity: 2 });
    expect(await doc(other)).toMatchObject({ open_quantity: 3 });

    await sql`UPDATE shop_order SET status = 'shipped' WHERE id = ${order}::bigint`.execute(ctx.db);
    await drain();
    expect(await doc(product)).toMatchObject({ open_quantity: 0 });
    expect(await doc(other)).toMatchObject({ open_quantity: 0 });

    await sql`UPDATE shop_order SET status = 'open' WHERE id = ${order}::bigint`.execute(ctx.db);
    await drain();
    await sql`DELETE FROM shop_order WHERE id = ${order}::bigint`.execute(ctx.db);
    await drain();
    expect(await doc(product)).toMatchObject({ open_quantity: 0 });
    await expectConverged();
  });

  it("a re-parent reaches both sides: a stock row moved to another product, a line moved to another order, a product moved to another category", async () => {
    await sql`INSERT INTO shop_stock (product_id, quantity) VALUES (${product}::bigint, 7)`.execute(ctx.db);
    await drain();
    expect(await doc(product)).toMatchObject({ stock: 7, in_stock: true });
    await sql`UPDATE shop_stock SET product_id = ${other}::bigint WHERE product_id = ${product}::bigint`.execute(ctx.db);
    await drain();
    expect(await doc(product)).toMatchObject({ stock: 0, in_stock: false });
    expect(await doc(other)).toMatchObject({ stock: 7, in_stock: true });

    const open = await one(sql<{ id: string }>`INSERT INTO shop_order (status) VALUES ('open') RETURNING id::text AS id`);
    const closed = await one(sql<{ id: string }>`INSERT INTO shop_order (status) VALUES ('closed') RETURNING id::text AS id`);
    const line = await one(sql<{ id: string }>`INSERT INTO shop_order_line (order_id, product_id, quantity) VALUES (${open}::bigint, ${product}::bigint, 4) RETURNING id::text AS id`);
    await drain();
    expect(await doc(product)).toMatchObject({ open_quantity: 4 });
    await sql`UPDATE shop_order_line SET order_id = ${closed}::bigint WHERE id = ${line}::bigint`.execute(ctx.db);
    await drain();
    expect(await doc(product)).toMatchObject({ open_quantity: 0 });

    const garden = await one(sql<{ id: string }>`INSERT INTO shop_category (name) VALUES ('Garden') RETURNING id::text AS id`);
    await sql`UPDATE shop_product SET category_id = ${garden}::bigint WHERE id = ${product}::bigint`.execute(ctx.db);
    await drain();
    expect(await doc(product)).toMatchObject({ category: "Garden" });
    expect(await doc(other)).toMatchObject({ category: "Tools" });
    await expectConverged();
  });

  it("a change to a column no document reads enqueues nothing, and a rolled-back change leaves nothing behind", async () => {
    await sql`UPDATE shop_category SET note = 'reviewed'`.execute(ctx.db);
    await sql`UPDATE shop_stock SET updated_at = now()`.execute(ctx.db);
    expect(await ctx.jobs()).toEqual({});
    await ctx.db
      .transaction()
      .execute(async (trx) => {
        await sql`UPDATE shop_category SET name = 'Rolled back'`.execute(trx);
        throw new Error("roll back");
      })
      .catch(() => undefined);
    expect(await ctx.jobs()).toEqual({});
    const changes = await sql<{ n: string }>`SELECT count(*) AS n FROM tether.embed_change WHERE version > expanded`.execute(ctx.db);
    expect(Number(changes.rows[0]!.n)).toBe(0);
    await expectConverged();
  });
});

describe("a pending change and a lost one", () => {
  it("a drain pass never confirms a document whose category changed and whose fan-out has not reached it: it rewrites it", async () => {
    await sql`INSERT INTO tether.paused_name (name, reason) VALUES ('fanout_shop_product', 'test: hold the fan-out')`.execute(ctx.db);
    try {
      await sql`UPDATE shop_category SET name = 'Hand tools'`.execute(ctx.db);
      // A job for one product whose document is at its row's version: without the pending change it would be confirmed as it stands.
      await sql`INSERT INTO tether.job (name, tag, kwargs) VALUES ('sync_shop_product', 'live', jsonb_build_object('id', ${product}::text))`.execute(ctx.db);
      await drain();
      expect(await doc(product)).toMatchObject({ name: "hammer", category: "Hand tools" });
      // The other product waits for the fan-out, which is held.
      expect(await doc(other)).toMatchObject({ category: "Tools" });
    } finally {
      await sql`DELETE FROM tether.paused_name WHERE name = 'fanout_shop_product'`.execute(ctx.db);
    }
    await drain();
    expect(await doc(other)).toMatchObject({ category: "Hand tools" });
    await expectConverged();
  });

  it("verify finds a fan-out that was lost and one that skipped documents, reports them as embedded drift, and its repair converges", async () => {
    await sql`UPDATE shop_category SET name = 'Lost'`.execute(ctx.db);
    await sql`DELETE FROM tether.job WHERE starts_with(name, 'fanout_')`.execute(ctx.db);
    const lost = await verifyCollection(ctx.db, ctx.sink, shopProducts);
    expect(lost.drifted.embedded).toBe(2);
    expect(lost.enqueued).toBe(1);
    await drain();
    expect(await doc(product)).toMatchObject({ category: "Lost" });
    await expectConverged();

    // An expansion that finished without reaching the documents: the change is marked expanded, no job is left.
    await sql`UPDATE shop_category SET name = 'Skipped'`.execute(ctx.db);
    await sql`DELETE FROM tether.job WHERE starts_with(name, 'fanout_')`.execute(ctx.db);
    await sql`UPDATE tether.embed_change SET expanded = version`.execute(ctx.db);
    const skipped = await verifyCollection(ctx.db, ctx.sink, shopProducts);
    expect(skipped.drifted.embedded).toBe(2);
    expect(new Set(skipped.samples.embedded)).toEqual(new Set([product, other]));
    await drain();
    expect(await doc(other)).toMatchObject({ category: "Skipped" });
    await expectConverged();
  });
});
