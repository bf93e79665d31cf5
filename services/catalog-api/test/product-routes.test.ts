import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { sql } from "kysely";
import { Drainer } from "@tether/core";
import { withoutContent } from "@tether/testkit";
import { products } from "../src/product-collection.js";
import { createCatalogContext, type CatalogContext } from "./support/catalog-context.js";

interface Product {
  id: string;
  version: number;
  sku: string;
  name: string;
  priceCents: number;
  categoryId: string;
  categoryName: string;
  stock: number;
}

describe("the catalog's products: uuid ids, documents assembled from a join", () => {
  let ctx: CatalogContext;
  let tea: { id: string }, pots: { id: string };
  let sencha: Product, matcha: Product, teapot: Product;

  beforeAll(async () => {
    ctx = await createCatalogContext();
    tea = await ctx.call("POST", "/categories", { name: "Green tea" });
    pots = await ctx.call("POST", "/categories", { name: "Teapots" });
  });
  afterAll(() => ctx.close());
  const rowVersion = async (id: string) => Number((await sql<{ version: string }>`SELECT version FROM catalog_product WHERE id = ${id}`.execute(ctx.db)).rows[0]!.version);

  it("creates a product with its stock and syncs a document carrying the category's name and the stock", async () => {
    sencha = await ctx.call("POST", "/products", { sku: "TEA-1", name: "Sencha", description: "steamed leaves", priceCents: 1250, categoryId: tea.id, stock: 40 });
    matcha = await ctx.call("POST", "/products", { sku: "TEA-2", name: "Matcha", priceCents: 3000, categoryId: tea.id.toUpperCase() });
    teapot = await ctx.call("POST", "/products", { sku: "POT-1", name: "Kyusu", priceCents: 4500, categoryId: pots.id, stock: 3 });
    expect(sencha.id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/);
    expect(sencha).toMatchObject({ version: expect.any(Number), categoryId: tea.id, categoryName: "Green tea", stock: 40 });
    expect(matcha).toMatchObject({ categoryId: tea.id, categoryName: "Green tea", stock: 0 });

    expect(await ctx.document(sencha.id)).toMatchObject({ sku: "TEA-1", name: "Sencha", category_name: "Green tea", category_id: tea.id, stock: 40, in_stock: true, price: 12.5, price_cents: 1250 });
    expect(await ctx.document(matcha.id)).toMatchObject({ category_name: "Green tea", stock: 0, in_stock: false });
    expect((await ctx.sink.fetchStates(products.index, [teapot.id])).get(teapot.id)).toMatchObject({ version: teapot.version, deleted: false });
    expect(await ctx.call("GET", `/products/${sencha.id.toUpperCase()}`)).toEqual(sencha);
  });

  it("refuses what the catalog cannot hold, naming the field", async () => {
    const bad = async (method: "POST" | "PATCH" | "GET", url: string, payload: object | undefined, status: number) => {
      const res = await ctx.app.inject({ method, url, ...(payload ? { payload } : {}) });
      expect(res.statusCode, res.body).toBe(status);
      return res.json() as { error: string; field?: string };
    };
    expect(await bad("GET", "/products/42", undefined, 400)).toMatchObject({ error: "validation" });
    expect(await bad("POST", "/products", { sku: "X-1", name: "x", priceCents: 1, categoryId: "00000000-0000-4000-8000-000000000000" }, 400)).toMatchObject({ error: "validation", field: "categoryId" });
    expect(await bad("POST", "/products", { sku: "TEA-1", name: "dup", priceCents: 1, categoryId: tea.id }, 409)).toMatchObject({ error: "conflict", field: "sku" });
    expect(await bad("POST", "/products", { sku: "X-2", name: "x", priceCents: -1, categoryId: tea.id }, 400)).toMatchObject({ error: "validation" });
    const missing = await ctx.app.inject({ method: "GET", url: "/products/00000000-0000-4000-8000-000000000000" });
    expect(missing.statusCode).toBe(404);
    // Nothing of the refused writes reached the job table.
    expect((await ctx.jobs()).map((j) => j.kwargs.id).sort()).toEqual([sencha.id, matcha.id, teapot.id].sort());
  });

  it("re-syncs a product's document when its stock changes in the other table (the stock embed bumps it in the stock's transaction)", async () => {
    const before = new Set((await ctx.jobs()).map((j) => j.id));
    const after = await ctx.call<Product>("PUT", `/products/${matcha.id}/stock`, { quantity: 7 });
    expect(after).toMatchObject({ stock: 7, categoryName: "Green tea" });
    expect(after.version).toBeGreaterThan(matcha.version);
    expect(await rowVersion(matcha.id)).toBe(after.version);
    expect(await ctx.document(matcha.id)).toMatchObject({ stock: 7, in_stock: true });
    expect((await ctx.sink.fetchStates(products.index, [matcha.id])).get(matcha.id)).toMatchObject({ version: after.version, deleted: false });
    expect((await ctx.jobs()).filter((j) => !before.has(j.id))).toEqual([expect.objectContaining({ name: products.jobName, tag: "fanout:stock.update", kwargs: expect.objectContaining({ id: matcha.id }) })]);
    matcha = after;
    // A product with no stock row gets one; an unknown product is a 404 that writes nothing.
    await sql`DELETE FROM catalog_stock WHERE product_id = ${teapot.id}::uuid`.execute(ctx.db);
    expect(await ctx.call<Product>("PUT", `/products/${teapot.id}/stock`, { quantity: 3 })).toMatchObject({ stock: 3 });
    teapot = await ctx.call<Product>("GET", `/products/${teapot.id}`);
    expect(await ctx.document(teapot.id)).toMatchObject({ stock: 3, in_stock: true });
    const missing = await ctx.app.inject({ method: "PUT", url: "/products/00000000-0000-4000-8000-000000000000/stock", payload: { quantity: 1 } });
    expect(missing.statusCode).toBe(404);
  });

  it("renames a category with one fan-out job in the rename's transaction; the drainer re-syncs every product embedding its name", async () => {
    const before = await ctx.jobs();
    const res = await ctx.call<{ fanouts: number }>("PATCH", `/categories/${tea.id}`, { name: "Japanese green tea" });
    expect(res).toEqual({ id: tea.id, name: "Japanese green tea", fanouts: 1 });
    // The rename touched no product: one job names the category, whatever the number of products in it.
    for (const p of [sencha, matcha, teapot]) expect(await rowVersion(p.id)).toBe(p.version);
    const added = (await ctx.jobs()).filter((j) => !before.some((b) => b.id === j.id));
    expect(added).toEqual([expect.objectContaining({ name: "fanout_catalog_product", tag: "fanout:category.update", kwargs: expect.objectContaining({ embed: "category", link: tea.id }) })]);

    const drained = await new Drainer({ db: ctx.db, sink: ctx.sink, collections: [products] }).drainUntilEmpty();
    expect(drained.error).toBeUndefined();
    const versions = new Map(await Promise.all([sencha.id, matcha.id, teapot.id].map(async (id) => [id, await rowVersion(id)] as const)));
    // The expansion bumped the two tea products, not the teapot.
    expect(versions.get(teapot.id)).toBe(teapot.version);
    expect(versions.get(sencha.id)).toBeGreaterThan(sencha.version);
    expect(await ctx.document(sencha.id)).toMatchObject({ category_name: "Japanese green tea", stock: 40 });
    expect(await ctx.document(matcha.id)).toMatchObject({ category_name: "Japanese green tea", stock: 7 });
    expect(withoutContent(await ctx.sink.fetchStates(products.index, [sencha.id, matcha.id, teapot.id]))).toEqual(
      new Map([sencha.id, matcha.id, teapot.id].map((id) => [id, { version: versions.get(id), deleted: false }])),
    );
    expect(await ctx.document(teapot.id)).toMatchObject({ category_name: "Teapots" });
    expect((await ctx.call("GET", `/products/${sencha.id}`)).categoryName).toBe("Japanese green tea");
    // A rename of a category no product is in costs the same one job, and the drainer finds nothing to re-sync; an unknown category is a 404.
    const empty = await ctx.call("POST", "/categories", { name: "Empty" });
    expect(await ctx.call("PATCH", `/categories/${empty.id}`, { name: "Still empty" })).toEqual({ id: empty.id, name: "Still empty", fanouts: 1 });
    const missing = await ctx.app.inject({ method: "PATCH", url: "/categories/00000000-0000-4000-8000-000000000000", payload: { name: "x" } });
    expect(missing.statusCode).toBe(404);
    expect(missing.json()).toMatchObject({ error: "not_found", message: "category 00000000-0000-4000-8000-000000000000 not found" });
  });

  it("moves a product to another category and edits it through updateWithJob", async () => {
    const moved = await ctx.call<Product>("PATCH", `/products/${teapot.id}`, { categoryId: tea.id, priceCents: 3999, name: "Tokoname kyusu" });
    expect(moved).toMatchObject({ categoryName: "Japanese green tea", priceCents: 3999, stock: 3 });
    expect(moved.version).toBeGreaterThan(teapot.version);
    expect(await ctx.document(teapot.id)).toMatchObject({ name: "Tokoname kyusu", category_id: tea.id, category_name: "Japanese green tea", price: 39.99 });
  });

  it("searches by text, category and price range, and never shows a deleted product", async () => {
    await ctx.refresh();
    const ids = async (qs: string) => ((await ctx.call<{ rows: Product[] }>("GET", `/search?${qs}`)).rows.map((r) => r.id)).sort();
    expect(await ids("q=sencha")).toEqual([sencha.id]);
    expect(await ids("q=japanese")).toEqual([sencha.id, matcha.id, teapot.id].sort());
    expect(await ids(`categoryId=${tea.id}&minPriceCents=2000&maxPriceCents=3500`)).toEqual([matcha.id]);
    expect(await ids(`categoryId=${pots.id}`)).toEqual([]);

    await ctx.call("DELETE", `/products/${matcha.id}`);
    expect((await ctx.sink.fetchStates(products.index, [matcha.id])).get(matcha.id)).toEqual({ version: await rowVersion(matcha.id), deleted: true });
    await ctx.refresh();
    expect(await ids(`categoryId=${tea.id}`)).toEqual([sencha.id, teapot.id].sort());
    expect((await ctx.app.inject({ method: "GET", url: `/products/${matcha.id}` })).statusCode).toBe(404);
    expect((await ctx.app.inject({ method: "DELETE", url: `/products/${matcha.id}` })).statusCode).toBe(404);
    const row = await sql<{ deleted_at: Date | null }>`SELECT deleted_at FROM catalog_product WHERE id = ${matcha.id}`.execute(ctx.db);
    expect(row.rows[0]?.deleted_at).not.toBeNull();
  });
});
