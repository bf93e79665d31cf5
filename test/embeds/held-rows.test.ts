import { sql, type Kysely } from "kysely";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Drainer, enableCapture, pauseName, resumeName, verifyCollection } from "@tether/core/internal";
import { loadShopProducts, shopProducts } from "../support/shop.ts";
import { createShopContext, type ShopContext } from "../support/shop-context.ts";
import { drainToEmpty } from "../scenarios/support/drain.js";

/**
 * The drainer never waits for a row an application transaction holds. Its transactions hold rows
 * of their own (a fan-out chunk's documents, a batch's bumps), so waiting could close a cycle
 * with the application's transaction, which Postgres would then break by failing one of them —
 * the application's, if it started waiting first. Each test holds a row in an open application
 * transaction, runs the drainer beside it, and checks that the drainer came back without waiting,
 * left the held work for later without counting a failure, and that everything converges once the
 * application commits.
 */

let ctx: ShopContext;
beforeAll(async () => {
  ctx = await createShopContext();
  await enableCapture(ctx.db, shopProducts, { graceMs: 0 });
});
afterAll(() => ctx.close());

const drainer = () => new Drainer({ db: ctx.db, sink: ctx.sink, collections: [shopProducts], fanoutChunkSize: 10 });
const ids = async (q: ReturnType<typeof sql<{ id: string }>>) => (await q.execute(ctx.db)).rows.map((r) => r.id);

/** A category with `n` products in it, all drained. */
async function categoryWithProducts(name: string, n: number): Promise<{ category: string; products: string[] }> {
  const [category] = await ids(sql<{ id: string }>`INSERT INTO shop_category (name) VALUES (${name}) RETURNING id::text AS id`);
  const products = await ids(sql<{ id: string }>`INSERT INTO shop_product (name, category_id) SELECT ${name} || ' ' || g, ${category}::bigint FROM generate_series(1, ${n}::int) g RETURNING id::text AS id`);
  await drainToEmpty(drainer(), ctx.db);
  return { category: category!, products };
}

const fanoutJobs = async () =>
  (await sql<{ attempts: number; after: string | null; link: string }>`
    SELECT attempts, kwargs->>'after' AS after, kwargs->>'link' AS link FROM tether.job WHERE name = ${shopProducts.fanoutJobName!} ORDER BY id`.execute(ctx.db)).rows;

/** Every live product's document equals what its rows build now, and verify finds nothing. */
async function expectConverged(products: readonly string[]): Promise<void> {
  for (const row of await loadShopProducts(ctx.db, products)) {
    expect((await ctx.raw.get(shopProducts.index, String(row.id))).source).toMatchObject(shopProducts.toDocument(row));
  }
  expect((await verifyCollection(ctx.db, ctx.sink, shopProducts)).driftedTotal).toBe(0);
}

/** Runs `fn` in an application transaction that is still open while `beside` runs, then commits. */
async function whileHeld<T>(hold: (trx: Kysely<any>) => Promise<void>, beside: () => Promise<T>, then: (trx: Kysely<any>) => Promise<void>): Promise<T> {
  return ctx.db.transaction().execute(async (trx) => {
    await hold(trx);
    const out = await beside();
    await then(trx);
    return out;
  });
}

describe("the drainer beside an application transaction that holds a row", () => {
  it("a fan-out chunk stops before a document the application holds, and the application goes on to update one the chunk took", async () => {
    const { category, products } = await categoryWithProducts("Boots", 10);
    await sql`UPDATE shop_category SET name = 'Wellies' WHERE id = ${category}::bigint`.execute(ctx.db);
    const pass = await whileHeld(
      (trx) => sql`UPDATE shop_product SET name = 'held' WHERE id = ${products[4]}::bigint`.execute(trx).then(() => undefined),
      () => drainer().drainOnce(),
      // Had the chunk waited for the held row while holding the four before it, this would close a deadlock.
      (trx) => sql`UPDATE shop_product SET name = 'after' WHERE id = ${products[1]}::bigint`.execute(trx).then(() => undefined),
    );
    expect(pass.error).toBeUndefined();
    expect(pass.fanout).toMatchObject({ claimed: 1, expanded: 4, finished: 0, retried: 0, parked: 0 });
    // The progress stops before the held document, and waiting its turn is no failed attempt.
    expect(await fanoutJobs()).toEqual([{ attempts: 0, after: products[3], link: category }]);

    await drainToEmpty(drainer(), ctx.db);
    await expectConverged(products);
    expect((await ctx.raw.get(shopProducts.index, products[4]!)).source).toMatchObject({ name: "held", category: "Wellies" });
    expect((await ctx.raw.get(shopProducts.index, products[1]!)).source).toMatchObject({ name: "after", category: "Wellies" });
  });

  it("a fan-out whose change the application is changing again is finished later, not waited for", async () => {
    const { category, products } = await categoryWithProducts("Hats", 3);
    await sql`UPDATE shop_category SET name = 'Caps' WHERE id = ${category}::bigint`.execute(ctx.db);
    const pass = await whileHeld(
      // Records a newer change of the category: its row in tether.embed_change is held until commit.
      (trx) => sql`UPDATE shop_category SET name = 'Berets' WHERE id = ${category}::bigint`.execute(trx).then(() => undefined),
      () => drainer().drainOnce(),
      (trx) => sql`UPDATE shop_product SET name = 'after' WHERE id = ${products[0]}::bigint`.execute(trx).then(() => undefined),
    );
    expect(pass.error).toBeUndefined();
    expect(pass.fanout).toMatchObject({ claimed: 1, finished: 0, retried: 0, parked: 0 });
    expect(await fanoutJobs()).toEqual([
      { attempts: 0, after: null, link: category },
      { attempts: 0, after: null, link: category },
    ]);

    await drainToEmpty(drainer(), ctx.db);
    await expectConverged(products);
    expect((await ctx.raw.get(shopProducts.index, products[2]!)).source).toMatchObject({ category: "Berets" });
  });

  it("a drain pass skips bumping a document the application holds and retries its job", async () => {
    const { category, products } = await categoryWithProducts("Gloves", 2);
    // A pending change of the category (its fan-out paused) and a job of the product's own while
    // its document is at its row's version: the pass must bump the row past it before the write.
    await pauseName(ctx.db, shopProducts.fanoutJobName!, "held-rows test");
    await sql`UPDATE shop_category SET name = 'Mittens' WHERE id = ${category}::bigint`.execute(ctx.db);
    await sql`INSERT INTO tether.job (name, tag, kwargs) VALUES (${shopProducts.jobName}, 'live', jsonb_build_object('id', ${products[0]}::text))`.execute(ctx.db);
    const pass = await whileHeld(
      (trx) => sql`SELECT 1 FROM shop_product WHERE id = ${products[0]}::bigint FOR UPDATE`.execute(trx).then(() => undefined),
      () => drainer().drainOnce(),
      async () => undefined,
    );
    expect(pass.error).toBeUndefined();
    expect(pass).toMatchObject({ claimed: 1, retried: 1, raised: 0, repaired: 0 });

    await resumeName(ctx.db, shopProducts.fanoutJobName!);
    await drainToEmpty(drainer(), ctx.db);
    await expectConverged(products);
    expect((await ctx.raw.get(shopProducts.index, products[0]!)).source).toMatchObject({ category: "Mittens" });
  });
});
