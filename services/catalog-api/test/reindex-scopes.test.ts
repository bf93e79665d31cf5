import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { sql } from "kysely";
import { createCatalogContext, type CatalogContext } from "./support/catalog-context.js";

describe("re-index of products by the catalog's own scopes", () => {
  let ctx: CatalogContext;
  let a: { id: string }, b: { id: string };
  const inA: string[] = [];
  const inB: string[] = [];

  beforeAll(async () => {
    ctx = await createCatalogContext();
    a = await ctx.call("POST", "/categories", { name: "Herbal" });
    b = await ctx.call("POST", "/categories", { name: "Rooibos" });
    for (let i = 0; i < 4; i++) inA.push((await ctx.call("POST", "/products", { sku: `A-${i}`, name: `Herbal ${i}`, priceCents: 500 + i, categoryId: a.id })).id);
    for (let i = 0; i < 3; i++) inB.push((await ctx.call("POST", "/products", { sku: `B-${i}`, name: `Rooibos ${i}`, priceCents: 700 + i, categoryId: b.id })).id);
    // A soft-deleted product of A: its tombstone is re-verified too.
    await ctx.call("DELETE", `/products/${inA[3]}`);
    // Known edit times, one day apart: A-0 on Jan 1, A-1 on Jan 2, … B-2 on Jan 7.
    const all = [...inA, ...inB];
    for (const [i, id] of all.entries()) {
      await sql`UPDATE catalog_product SET updated_at = ${`2026-01-0${i + 1}T12:00:00Z`}::timestamptz WHERE id = ${id}::uuid`.execute(ctx.db);
    }
    await sql`DELETE FROM tether.job`.execute(ctx.db);
  });
  afterAll(() => ctx.close());

  async function reindex(body: object): Promise<{ enqueued: number; ids: string[]; priority: number }> {
    await sql`DELETE FROM tether.job`.execute(ctx.db);
    const res = await ctx.call<{ enqueued: number; priority: number }>("POST", "/reindex", body, 202);
    const jobs = await ctx.jobs();
    expect(jobs.every((j) => j.tag === "reindex")).toBe(true);
    return { ...res, ids: jobs.map((j) => j.kwargs.id).sort() };
  }

  it("by category: exactly that category's products, the soft-deleted one included", async () => {
    expect(await reindex({ scope: "category", value: a.id })).toMatchObject({ enqueued: 4, ids: [...inA].sort(), priority: 100 });
    expect(await reindex({ scope: "category", value: b.id.toUpperCase() })).toMatchObject({ enqueued: 3, ids: [...inB].sort() });
  });

  it("by updated_at range: from inclusive, to exclusive", async () => {
    expect(await reindex({ scope: "updated", from: "2026-01-02T12:00:00Z", to: "2026-01-05T12:00:00Z" })).toMatchObject({ enqueued: 3, ids: [inA[1], inA[2], inA[3]].sort(), priority: 1000 });
    expect(await reindex({ scope: "updated", from: "2026-01-06T00:00:00Z" })).toMatchObject({ enqueued: 2, ids: [inB[1], inB[2]].sort() });
  });

  it("by ids, canonicalising upper-case uuids; and everything", async () => {
    expect(await reindex({ scope: "ids", ids: [inB[0]!.toUpperCase(), inA[0]] })).toMatchObject({ enqueued: 2, ids: [inA[0], inB[0]].sort() });
    expect(await reindex({ scope: "all" })).toMatchObject({ enqueued: 7, ids: [...inA, ...inB].sort() });
  });

  it("refuses what is not a scope of products, naming the field, and enqueues nothing", async () => {
    await sql`DELETE FROM tether.job`.execute(ctx.db);
    const refuse = async (body: object, status: number, headers: Record<string, string> = { authorization: "Bearer catalog-test-token" }) => {
      const res = await ctx.app.inject({ method: "POST", url: "/reindex", payload: body, headers });
      expect(res.statusCode, res.body).toBe(status);
      return res.json() as { error: string; field?: string };
    };
    expect(await refuse({ scope: "ids", ids: ["42"] }, 400)).toMatchObject({ error: "validation", field: "ids.0" });
    expect(await refuse({ scope: "category", value: "herbal" }, 400)).toMatchObject({ error: "validation", field: "value" });
    expect(await refuse({ scope: "category", value: "00000000-0000-4000-8000-000000000000" }, 404)).toMatchObject({ error: "not_found" });
    expect(await refuse({ scope: "user", value: "x" }, 400)).toMatchObject({ error: "validation", field: "scope" });
    expect(await refuse({ scope: "updated", value: "x" }, 400)).toMatchObject({ error: "validation", field: "value" });
    expect(await refuse({ scope: "all" }, 401, {})).toMatchObject({ error: "unauthorized" });
    expect(await ctx.jobs()).toEqual([]);
  });
});
