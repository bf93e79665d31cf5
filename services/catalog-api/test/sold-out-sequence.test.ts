import { sql } from "kysely";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { EngineSink } from "@tether/search-sink";
import { runCli } from "../../../packages/cli/test/support/run-cli.js";
import { products } from "../src/product-collection.js";
import { createCatalogContext, type CatalogContext } from "./support/catalog-context.js";

/**
 * The sequence of issue 31, as a new user runs it with the catalog service: one category
 * "Shoes", 50 products in it with a stock of 5 each, drained; then the category renamed to
 * "Footwear" and every stock set to 0 — by plain SQL with capture enabled (an admin tool, a
 * warehouse job), and through the catalog API's routes (the writer) — then ONE
 * `tether drain --until-empty`, and every document says "Footwear" and out of stock. No verify
 * runs before the documents are counted. Both engines (vitest.config.ts's perSink list).
 */

const config = ["--config", "services/catalog-api/catalog.config.ts"];
const PRODUCTS = 50;

/** `tether <args> --config catalog.config.ts` against the context's database and engine. */
async function tether(ctx: CatalogContext<EngineSink>, ...args: string[]) {
  const r = await runCli(ctx, [...args, ...config], ctx.serviceEnv());
  expect(r.code, `tether ${args.join(" ")}: ${r.stdout}${r.stderr}`).toBe(0);
  return r.stdout;
}

/** Documents of the category matching a Lucene query string, as `GET catalog-products/_count?q=…` counts them. */
const count = (ctx: CatalogContext<EngineSink>, categoryId: string, q: string) =>
  ctx.raw.count(products.index, { bool: { filter: [{ term: { category_id: categoryId } }, { query_string: { query: q } }] } });

async function expectSoldOutFootwear(ctx: CatalogContext<EngineSink>, categoryId: string): Promise<void> {
  expect(await count(ctx, categoryId, "*:*")).toBe(PRODUCTS);
  expect(await count(ctx, categoryId, "in_stock:true")).toBe(0);
  expect(await count(ctx, categoryId, "in_stock:false AND stock:0")).toBe(PRODUCTS);
  expect(await count(ctx, categoryId, 'category_name.raw:"Footwear"')).toBe(PRODUCTS);
  expect(await count(ctx, categoryId, "category_name:shoes")).toBe(0);
  // Every document at its row's version: nothing left for a verify to find.
  const rows = await sql<{ id: string; version: string }>`SELECT id::text, version::text FROM catalog_product WHERE category_id = ${categoryId}::uuid`.execute(ctx.db);
  const states = await ctx.sink.fetchStates(products.index, rows.rows.map((r) => r.id));
  expect(rows.rows.filter((r) => states.get(r.id)?.version !== Number(r.version))).toEqual([]);
}

describe("by plain SQL with capture enabled", () => {
  let ctx: CatalogContext<EngineSink>;
  beforeAll(async () => {
    ctx = await createCatalogContext({}, { sink: "per-project" });
  });
  afterAll(() => ctx.close());

  it("a category rename and every stock set to 0 reach all 50 documents after one tether drain --until-empty", async () => {
    // Due at once (no grace period): nothing here writes through the writer and its direct sync.
    const enabled = await tether(ctx, "capture", "enable", "catalog_product", "--grace-ms", "0");
    expect(enabled).toMatch(/catalog_category/);
    expect(enabled).toMatch(/catalog_stock/);

    const category = (await sql<{ id: string }>`INSERT INTO catalog_category (name) VALUES ('Shoes') RETURNING id::text`.execute(ctx.db)).rows[0]!.id;
    await sql`
      INSERT INTO catalog_product (sku, name, price_cents, category_id)
      SELECT 'SHOE-' || g, 'Shoe ' || g, 4900, ${category}::uuid FROM generate_series(1, ${PRODUCTS}) g`.execute(ctx.db);
    await sql`INSERT INTO catalog_stock (product_id, quantity) SELECT id, 5 FROM catalog_product WHERE category_id = ${category}::uuid`.execute(ctx.db);
    await tether(ctx, "drain", "--until-empty");
    expect(await count(ctx, category, "in_stock:true")).toBe(PRODUCTS);
    expect(await count(ctx, category, 'category_name.raw:"Shoes"')).toBe(PRODUCTS);

    // The rename costs its transaction one fan-out job; the stock update bumps each product it changed.
    await sql`UPDATE catalog_category SET name = 'Footwear'`.execute(ctx.db);
    expect((await ctx.jobs()).map((j) => `${j.name} ${j.tag}`)).toEqual(["fanout_catalog_product fanout:category.update"]);
    await sql`UPDATE catalog_stock SET quantity = 0`.execute(ctx.db);
    expect((await ctx.jobs()).filter((j) => j.tag === "fanout:stock.update")).toHaveLength(PRODUCTS);

    const drained = JSON.parse(await tether(ctx, "drain", "--until-empty", "--json")) as { error?: string };
    expect(drained.error).toBeUndefined();
    expect(await ctx.jobs()).toEqual([]);
    await expectSoldOutFootwear(ctx, category);
  });
});

describe("through the catalog API (the writer's verbs on the embeds)", () => {
  let ctx: CatalogContext<EngineSink>;
  beforeAll(async () => {
    ctx = await createCatalogContext({}, { sink: "per-project" });
  });
  afterAll(() => ctx.close());

  it("PUT /products/:id/stock and PATCH /categories/:id reach all 50 documents after one tether drain --until-empty", async () => {
    const category = (await ctx.call<{ id: string }>("POST", "/categories", { name: "Shoes" })).id;
    const ids: string[] = [];
    for (let i = 1; i <= PRODUCTS; i++) ids.push((await ctx.call<{ id: string }>("POST", "/products", { sku: `SHOE-${i}`, name: `Shoe ${i}`, priceCents: 4900, categoryId: category, stock: 5 })).id);
    expect(await count(ctx, category, "in_stock:true")).toBe(PRODUCTS);

    // The stock first: each write bumps its product and syncs its document directly. (After the
    // rename, these syncs would carry the new name too, read through load: the rename's own
    // path would go unseen.)
    for (const id of ids) expect(await ctx.call("PUT", `/products/${id}/stock`, { quantity: 0 })).toMatchObject({ id, stock: 0, categoryName: "Shoes" });
    expect(await count(ctx, category, "in_stock:true")).toBe(0);
    // O(1) in the request: one fan-out job, no product touched; the documents wait for the drainer.
    const versions = await sql<{ v: string }>`SELECT string_agg(version::text, ',' ORDER BY id) AS v FROM catalog_product`.execute(ctx.db);
    expect(await ctx.call("PATCH", `/categories/${category}`, { name: "Footwear" })).toEqual({ id: category, name: "Footwear", fanouts: 1 });
    expect((await sql<{ v: string }>`SELECT string_agg(version::text, ',' ORDER BY id) AS v FROM catalog_product`.execute(ctx.db)).rows).toEqual(versions.rows);
    expect(await count(ctx, category, 'category_name.raw:"Footwear"')).toBe(0);

    await tether(ctx, "drain", "--until-empty");
    expect((await ctx.jobs()).filter((j) => j.name === "fanout_catalog_product")).toEqual([]);
    await expectSoldOutFootwear(ctx, category);
  });
});
