import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { sql } from "kysely";
import { Drainer } from "@tether/core";
import { startFaultProxy, withoutContent, type FaultProxy } from "@tether/testkit";
import type { FastifyInstance } from "fastify";
import { products } from "../src/product-collection.js";
import { createCatalogContext, type CatalogContext } from "./support/catalog-context.js";

describe("Elasticsearch down during catalog writes: the drainer repairs every document later", () => {
  let ctx: CatalogContext;
  let proxy: FaultProxy;
  let app: FastifyInstance;
  let drainer: Drainer | undefined;
  let category: { id: string };
  let kept: { id: string }, restocked: { id: string }, removed: { id: string; version: number }, createdOffline: { id: string };
  const rowVersion = async (id: string) => Number((await sql<{ version: string }>`SELECT version FROM catalog_product WHERE id = ${id}::uuid`.execute(ctx.db)).rows[0]!.version);

  beforeAll(async () => {
    ctx = await createCatalogContext();
    proxy = await startFaultProxy({ target: ctx.elasticsearchUrl });
    // Writes go through the proxy; search and checks read Elasticsearch directly.
    app = await ctx.build({ sink: ctx.sinkAt(proxy.url), search: ctx.sink, graceMs: 0, directSyncTimeoutMs: 2_000 });
    category = await ctx.call("POST", "/categories", { name: "Darjeeling" }, 201, app);
    kept = await ctx.call("POST", "/products", { sku: "D-1", name: "First flush", priceCents: 2000, categoryId: category.id, stock: 1 }, 201, app);
    restocked = await ctx.call("POST", "/products", { sku: "D-2", name: "Second flush", priceCents: 2200, categoryId: category.id, stock: 1 }, 201, app);
    removed = await ctx.call("POST", "/products", { sku: "D-3", name: "Autumnal", priceCents: 1800, categoryId: category.id }, 201, app);
  });
  afterAll(async () => {
    await drainer?.stop();
    await proxy.close();
    await ctx.close();
  });

  it("answers every write while Elasticsearch refuses connections, leaving the index stale", async () => {
    expect(await ctx.document(kept.id)).toMatchObject({ category_name: "Darjeeling" });
    await proxy.setMode("refuse");
    createdOffline = await ctx.call("POST", "/products", { sku: "D-4", name: "Monsoon flush", priceCents: 1500, categoryId: category.id, stock: 9 }, 201, app);
    // The rename is one fan-out job, whatever the engine's state: the drainer expands it later.
    expect(await ctx.call("PATCH", `/categories/${category.id}`, { name: "Darjeeling estate" }, 200, app)).toEqual({ id: category.id, name: "Darjeeling estate", fanouts: 1 });
    await ctx.call("PUT", `/products/${restocked.id}/stock`, { quantity: 50 }, 200, app);
    await ctx.call("DELETE", `/products/${removed.id}`, undefined, 204, app);
    expect(await ctx.call("POST", "/products/price-change", { ids: [kept.id], percent: 25 }, 200, app)).toMatchObject({ changed: 1, sync: "error" });

    expect(await ctx.document(createdOffline.id)).toBeUndefined();
    expect(await ctx.document(restocked.id)).toMatchObject({ category_name: "Darjeeling", stock: 1 });
    expect(await ctx.document(kept.id)).toMatchObject({ category_name: "Darjeeling", price_cents: 2000 });
    expect((await ctx.sink.fetchStates(products.index, [removed.id])).get(removed.id)).toMatchObject({ version: removed.version, deleted: false });
    // The three creates before the outage, then the create, the stock, the delete and the price change
    // and the rename's one fan-out job: all due (no grace period here).
    expect((await ctx.jobs()).map((j) => j.name).sort()).toEqual(["fanout_catalog_product", ...Array(7).fill(products.jobName)]);
  });

  it("brings every document up to date once Elasticsearch is back, and deletes every job", async () => {
    await proxy.setMode("pass");
    drainer = new Drainer({ db: ctx.db, sink: ctx.sinkAt(proxy.url), collections: [products] });
    const result = await drainer.drainUntilEmpty();
    expect(result.error).toBeUndefined();
    expect(result).toMatchObject({ parked: 0 });
    expect(await ctx.jobs()).toEqual([]);

    expect(await ctx.document(createdOffline.id)).toMatchObject({ name: "Monsoon flush", category_name: "Darjeeling estate", stock: 9 });
    expect(await ctx.document(restocked.id)).toMatchObject({ category_name: "Darjeeling estate", stock: 50 });
    expect(await ctx.document(kept.id)).toMatchObject({ category_name: "Darjeeling estate", price_cents: 2500 });
    expect(withoutContent(await ctx.sink.fetchStates(products.index, [kept.id, restocked.id, removed.id, createdOffline.id]))).toEqual(
      new Map([
        [kept.id, { version: await rowVersion(kept.id), deleted: false }],
        [restocked.id, { version: await rowVersion(restocked.id), deleted: false }],
        [removed.id, { version: await rowVersion(removed.id), deleted: true }],
        [createdOffline.id, { version: await rowVersion(createdOffline.id), deleted: false }],
      ]),
    );
  });
});
