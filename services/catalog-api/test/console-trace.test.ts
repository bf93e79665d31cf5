import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { sql } from "kysely";
import { traceEntity } from "@tether/admin";
import { products } from "../src/product-collection.js";
import { createCatalogContext, type CatalogContext } from "./support/catalog-context.js";

describe("the admin console's trace of a catalog product (uuid id, document from a join)", () => {
  let ctx: CatalogContext;
  let product: { id: string; version: number };
  let category: { id: string };

  beforeAll(async () => {
    ctx = await createCatalogContext();
    category = await ctx.call("POST", "/categories", { name: "Genmaicha" });
    product = await ctx.call("POST", "/products", { sku: "G-1", name: "Genmaicha", priceCents: 900, categoryId: category.id, stock: 2 });
  });
  afterAll(() => ctx.close());

  it("compares the document with the one built from the joined row", async () => {
    const trace = await traceEntity(ctx.db, ctx.sink, products, product.id.toUpperCase());
    expect(trace).toMatchObject({ id: product.id, verdict: "in_sync", postgres: { exists: true, version: product.version }, downstream: { version: product.version, contentMatches: true } });
    expect(trace.postgres.row).toMatchObject({ category_name: "Genmaicha", stock: 2 });
  });

  it("says the content differs when an embedded value changed without a version bump", async () => {
    // Renamed behind the application's back: no version bump, no job.
    await sql`UPDATE catalog_category SET name = 'Brown rice tea' WHERE id = ${category.id}::uuid`.execute(ctx.db);
    const trace = await traceEntity(ctx.db, ctx.sink, products, product.id);
    expect(trace).toMatchObject({ verdict: "content_differs", downstream: { version: product.version, contentMatches: false } });
  });
});
