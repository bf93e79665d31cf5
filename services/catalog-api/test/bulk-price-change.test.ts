import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { sql } from "kysely";
import { Drainer } from "@tether/core";
import { products } from "../src/product-collection.js";
import { createCatalogContext, type CatalogContext } from "./support/catalog-context.js";

const COUNT = 500;

describe("a bulk price change of 500 products through writeWithJobs", () => {
  let ctx: CatalogContext;
  let drainer: Drainer | undefined;
  let category: { id: string };
  let other: { id: string; version: number };
  let ids: string[];
  /** The products' versions in Postgres, by id. */
  const rowVersions = async (of: readonly string[]) =>
    new Map((await sql<{ id: string; version: string }>`SELECT id::text, version::text FROM catalog_product WHERE id = ANY(${[...of]}::uuid[])`.execute(ctx.db)).rows.map((r) => [r.id, Number(r.version)]));

  beforeAll(async () => {
    ctx = await createCatalogContext({ graceMs: 0 });
    category = await ctx.call("POST", "/categories", { name: "Oolong" });
    const elsewhere = await ctx.call("POST", "/categories", { name: "Black tea" });
    other = await ctx.call("POST", "/products", { sku: "OTHER-1", name: "Assam", priceCents: 1000, categoryId: elsewhere.id });
    // Seeded in one statement (the write path of each product is not what this file is about),
    // with stock in the other table, then indexed by a re-index of everything and a drain.
    const seeded = await sql<{ id: string }>`
      INSERT INTO catalog_product (sku, name, price_cents, category_id)
      SELECT 'OOL-' || g, 'Oolong ' || g, 1000 + g, ${category.id}::uuid FROM generate_series(1, ${COUNT}) g RETURNING id::text`.execute(ctx.db);
    ids = seeded.rows.map((r) => r.id).sort();
    await sql`INSERT INTO catalog_stock (product_id, quantity) SELECT id, 5 FROM catalog_product WHERE category_id = ${category.id}::uuid`.execute(ctx.db);
    expect(await ctx.call("POST", "/reindex", { scope: "category", value: category.id }, 202)).toMatchObject({ enqueued: COUNT });
    drainer = new Drainer({ db: ctx.db, sink: ctx.sink, collections: [products] });
    const seededDrain = await drainer.drainUntilEmpty();
    expect(seededDrain).toMatchObject({ repaired: COUNT, parked: 0 });
  });
  afterAll(async () => {
    await drainer?.stop();
    await ctx.close();
  });

  it("changes every price and enqueues one job per product in one transaction; the drainer confirms and deletes them all", async () => {
    // The writer's direct sync goes to a dead node: the drainer alone must bring the index up to date.
    const offline = await ctx.build({ sink: ctx.sinkAt("http://127.0.0.1:1"), search: ctx.sink, graceMs: 0 });
    const res = await ctx.call("POST", "/products/price-change", { categoryId: category.id, percent: 10 }, 200, offline);
    expect(res).toEqual({ changed: COUNT, jobs: COUNT, sync: "error" });
    const jobs = await ctx.jobs();
    expect(jobs).toHaveLength(COUNT);
    expect(jobs.map((j) => j.kwargs.id).sort()).toEqual(ids);
    expect(new Set(jobs.map((j) => j.name))).toEqual(new Set([products.jobName]));

    // The index still holds every product at a version below its row's.
    const versions = await rowVersions(ids);
    const states = await ctx.sink.fetchStates(products.index, ids);
    expect(ids.filter((id) => !(states.get(id)!.version < versions.get(id)!))).toEqual([]);

    const result = await drainer!.drainUntilEmpty();
    expect(result.error).toBeUndefined();
    expect(result).toMatchObject({ claimed: COUNT, repaired: COUNT, parked: 0, retried: 0 });
    const left = await sql<{ jobs: string; dead: string }>`SELECT (SELECT count(*) FROM tether.job) AS jobs, (SELECT count(*) FROM tether.dead_job) AS dead`.execute(ctx.db);
    expect(left.rows[0]).toEqual({ jobs: "0", dead: "0" });

    const after = await ctx.sink.fetchStates(products.index, ids);
    expect(after.size).toBe(COUNT);
    expect(ids.filter((id) => after.get(id)!.version !== versions.get(id) || after.get(id)!.deleted)).toEqual([]);
    const sample = [ids[0]!, ids[250]!, ids[COUNT - 1]!];
    for (const id of sample) {
      const row = await sql<{ price_cents: number; sku: string }>`SELECT price_cents, sku FROM catalog_product WHERE id = ${id}::uuid`.execute(ctx.db);
      const g = Number(row.rows[0]!.sku.slice(4));
      expect(row.rows[0]!.price_cents).toBe(Math.round((1000 + g) * 1.1));
      expect(await ctx.document(id)).toMatchObject({ price_cents: Math.round((1000 + g) * 1.1), category_name: "Oolong", stock: 5 });
    }
    // The product of the other category was not touched.
    expect((await ctx.sink.fetchStates(products.index, [other.id])).get(other.id)).toMatchObject({ version: other.version, deleted: false });
  });

  it("changes the prices of a list of ids with a direct sync that lands at once", async () => {
    const some = ids.slice(0, 3);
    const res = await ctx.call("POST", "/products/price-change", { ids: some.map((i) => i.toUpperCase()), percent: -50 }, 200);
    expect(res).toEqual({ changed: 3, jobs: 3, sync: "ok" });
    const states = await ctx.sink.fetchStates(products.index, some);
    const versions = await rowVersions(some);
    expect(some.map((id) => states.get(id))).toMatchObject(some.map((id) => ({ version: versions.get(id), deleted: false })));
    const bad = await ctx.app.inject({ method: "POST", url: "/products/price-change", payload: { percent: 5 } });
    expect(bad.statusCode).toBe(400);
    expect(bad.json()).toMatchObject({ error: "validation", field: "categoryId" });
  });
});
