import { sql } from "kysely";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createWriter, Drainer, enableCapture, verifyCollection } from "@tether/core/internal";
import { loadShopProducts, shopProducts } from "../support/shop.ts";
import { createShopContext, type ShopContext } from "../support/shop-context.ts";

let ctx: ShopContext;
beforeAll(async () => {
  ctx = await createShopContext({ sink: "per-project" });
  await enableCapture(ctx.db, shopProducts, { graceMs: 0 });
});
afterAll(() => ctx.close());

const drain = () => new Drainer({ db: ctx.db, sink: ctx.sink, collections: [shopProducts] }).drainUntilEmpty();

/** Every product's document, by id. */
async function documents(ids: readonly string[]): Promise<Map<string, Record<string, unknown> | undefined>> {
  const out = new Map<string, Record<string, unknown> | undefined>();
  for (const id of ids) out.set(id, (await ctx.raw.get(shopProducts.index, id)).source);
  return out;
}

/** What `load` + `toDocument` build from the rows now. */
async function expected(ids: readonly string[]): Promise<Map<string, Record<string, unknown>>> {
  const rows = await loadShopProducts(ctx.db, ids);
  return new Map(rows.map((r) => [String(r.id), shopProducts.toDocument(r)]));
}

describe("documents from several tables", () => {
  it("a category renamed and every stock set to 0 by plain SQL reach all 50 products after one drain, and the rename cost the writing transaction one job", async () => {
    const category = (await sql<{ id: string }>`INSERT INTO shop_category (name) VALUES ('Shoes') RETURNING id::text`.execute(ctx.db)).rows[0]!.id;
    const ids = (await sql<{ id: string }>`INSERT INTO shop_product (name, category_id) SELECT 'shoe ' || g, ${category}::bigint FROM generate_series(1, 50) g RETURNING id::text`.execute(ctx.db)).rows.map((r) => r.id);
    await sql`INSERT INTO shop_stock (product_id, quantity) SELECT id, 5 FROM shop_product WHERE category_id = ${category}::bigint`.execute(ctx.db);
    await drain();
    for (const [, doc] of await documents(ids)) expect(doc).toMatchObject({ category: "Shoes", in_stock: true, stock: 5 });

    await sql`UPDATE shop_category SET name = 'Footwear' WHERE id = ${category}::bigint`.execute(ctx.db);
    expect(await ctx.jobs()).toEqual({ fanout_shop_product: 1 });
    await sql`UPDATE shop_stock SET quantity = 0`.execute(ctx.db);
    const r = await drain();
    expect(r.error).toBeUndefined();
    const want = await expected(ids);
    for (const [id, doc] of await documents(ids)) {
      expect(doc).toMatchObject({ category: "Footwear", in_stock: false, stock: 0 });
      expect(doc).toMatchObject(want.get(id)!);
    }
    expect(await ctx.jobs()).toEqual({});
    const report = await verifyCollection(ctx.db, ctx.sink, shopProducts);
    expect(report.driftedTotal).toBe(0);
  });

  it("the writer's verbs on an embed reach the documents: a rename fans out, a stock change bumps its product and syncs it directly", async () => {
    const writer = createWriter({ sink: ctx.sink, graceMs: 60_000 });
    const category = (await sql<{ id: string }>`INSERT INTO shop_category (name) VALUES ('Hats') RETURNING id::text`.execute(ctx.db)).rows[0]!.id;
    const ids = (await sql<{ id: string }>`INSERT INTO shop_product (name, category_id) SELECT 'hat ' || g, ${category}::bigint FROM generate_series(1, 10) g RETURNING id::text`.execute(ctx.db)).rows.map((r) => r.id);
    await drain();
    const renamed = await writer.updateWithJob(ctx.db, shopProducts.embeds.category, category, { name: "Caps" });
    expect(renamed).toMatchObject({ fanouts: 1, sync: "skipped" });
    const stocked = await writer.createWithJob(ctx.db, shopProducts.embeds.stock, { product_id: ids[0]!, quantity: 3 });
    expect(stocked.sync).toBe("ok");
    expect(stocked.changes.map((c) => c.id)).toEqual([ids[0]]);
    expect((await ctx.raw.get(shopProducts.index, ids[0]!)).source).toMatchObject({ stock: 3, in_stock: true });
    await drain();
    for (const [, doc] of await documents(ids)) expect(doc).toMatchObject({ category: "Caps" });
    // Only the stock write's own job is left, due after its grace period (its direct sync did the work).
    expect(await ctx.jobs()).toEqual({ sync_shop_product: 1 });
  });

  it("a stock change whose direct sync fails makes its product's job due at once, as the writer's own verbs do", async () => {
    const writer = createWriter({ sink: ctx.sinkAt("http://127.0.0.1:1"), graceMs: 60_000, breaker: false });
    const product = (await sql<{ id: string }>`INSERT INTO shop_product (name) VALUES ('scarf') RETURNING id::text`.execute(ctx.db)).rows[0]!.id;
    await drain();
    const stocked = await writer.createWithJob(ctx.db, shopProducts.embeds.stock, { product_id: product, quantity: 2 });
    expect(stocked.sync).toBe("error");
    const due = await sql<{ due: boolean }>`SELECT scheduled_at <= now() AS due FROM tether.job WHERE id = ANY(${stocked.jobIds}::bigint[])`.execute(ctx.db);
    expect(due.rows).toEqual([{ due: true }]);
    await drain();
    expect((await ctx.raw.get(shopProducts.index, product)).source).toMatchObject({ stock: 2, in_stock: true });
  });
});
