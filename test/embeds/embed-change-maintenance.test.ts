import { sql } from "kysely";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Drainer, enableCapture, runMaintenance } from "@tether/core/internal";
import { createShopContext, type ShopContext } from "../support/shop-context.js";
import { shopProducts } from "../support/shop.js";

/** The upkeep of tether.embed_change: finished changes go after their retention, pending ones never. */

let ctx: ShopContext;
beforeAll(async () => {
  ctx = await createShopContext();
  await enableCapture(ctx.db, shopProducts, { graceMs: 0 });
});
afterAll(() => ctx.close());

const drainer = () => new Drainer({ db: ctx.db, sink: ctx.sink, collections: [shopProducts], fanoutChunkSize: 10 });

/** A category with `n` products in it, all drained. */
async function categoryWithProducts(name: string, n: number): Promise<string> {
  const category = (await sql<{ id: string }>`INSERT INTO shop_category (name) VALUES (${name}) RETURNING id::text`.execute(ctx.db)).rows[0]!.id;
  await sql`INSERT INTO shop_product (name, category_id) SELECT ${name} || ' ' || g, ${category}::bigint FROM generate_series(1, ${n}::int) g`.execute(ctx.db);
  expect((await drainer().drainUntilEmpty()).error).toBeUndefined();
  return category;
}

describe("maintenance of tether.embed_change", () => {
  it("prunes finished changes older than the retention (7 days by default), never a pending one", async () => {
    // One category's change expanded (finished), another's still to expand (pending).
    await categoryWithProducts("Scarves", 2);
    const category = await categoryWithProducts("Gloves", 2);
    await sql`UPDATE shop_category SET name = 'Mittens' WHERE id = ${category}::bigint`.execute(ctx.db);
    const counts = async () =>
      (await sql<{ finished: number; pending: number }>`
        SELECT count(*) FILTER (WHERE version <= expanded)::int AS finished, count(*) FILTER (WHERE version > expanded)::int AS pending FROM tether.embed_change`.execute(ctx.db)).rows[0]!;
    const before = await counts();
    expect(before).toEqual({ finished: 1, pending: 1 });
    // Every change eight days old: the finished ones are past the default retention.
    await sql`UPDATE tether.embed_change SET changed_at = now() - interval '8 days'`.execute(ctx.db);
    expect((await runMaintenance(ctx.db, { sampleIntervalMs: 0, fanoutChangeRetentionMs: 9 * 86_400_000 })).prunedFanoutChanges).toBe(0);
    expect((await runMaintenance(ctx.db, { sampleIntervalMs: 0 })).prunedFanoutChanges).toBe(1);
    expect(await counts()).toEqual({ finished: 0, pending: 1 });
    // The pending change still reaches its products.
    expect((await drainer().drainUntilEmpty()).error).toBeUndefined();
    expect(await counts()).toEqual({ finished: 1, pending: 0 });
    expect((await sql<{ link: string }>`SELECT link FROM tether.embed_change`.execute(ctx.db)).rows).toEqual([{ link: category }]);
  });
});
