import { sql, type Insertable, type Kysely } from "kysely";
import { nextVersion } from "@tether/core";
import type { CatalogDB, CategoryRow, ProductDocumentRow, ProductRow } from "./catalog-db.js";

/**
 * Every statement the catalog issues on its tables. Writes of products run inside the writer's
 * transaction (`writeWithJobs`), which enqueues a job for every product they return; writes of a
 * category's name or a stock go through the writer's verbs on the collection's embeds.
 */

type Db = Kysely<CatalogDB>;

/**
 * The products with these ids as their documents are built: each row with its category's name
 * and its stock, in one join for the whole batch. Soft-deleted products are included (their
 * documents become tombstones); an id with no row is simply absent.
 */
export async function loadProductDocuments(db: Db, ids: readonly string[]): Promise<ProductDocumentRow[]> {
  if (ids.length === 0) return [];
  return db
    .selectFrom("catalog_product as p")
    .innerJoin("catalog_category as c", "c.id", "p.category_id")
    .leftJoin("catalog_stock as s", "s.product_id", "p.id")
    .selectAll("p")
    .select(["c.name as category_name", sql<number>`coalesce(s.quantity, 0)`.as("stock")])
    .where(sql<boolean>`p.id = ANY(${[...ids]}::uuid[])`)
    .execute();
}

/** The live products among these ids, as documents are built. */
export async function findLiveProducts(db: Db, ids: readonly string[]): Promise<ProductDocumentRow[]> {
  return (await loadProductDocuments(db, ids)).filter((p) => p.deleted_at === null);
}

export async function insertCategory(db: Db, name: string): Promise<CategoryRow> {
  return db.insertInto("catalog_category").values({ name }).returningAll().executeTakeFirstOrThrow();
}

export async function findCategory(db: Db, id: string): Promise<CategoryRow | undefined> {
  return db.selectFrom("catalog_category").selectAll().where("id", "=", id).executeTakeFirst();
}

/** Inserts a product at the next version of tether's version sequence. */
export async function insertProduct(trx: Db, values: Insertable<CatalogDB["catalog_product"]>): Promise<ProductRow> {
  return trx.insertInto("catalog_product").values({ ...values, version: nextVersion() }).returningAll().executeTakeFirstOrThrow();
}

/** The stock row of a product being created (in the product's own transaction). */
export async function insertStock(trx: Db, productId: string, quantity: number): Promise<void> {
  await trx.insertInto("catalog_stock").values({ product_id: productId, quantity }).execute();
}

/** Which live products a price change touches: a category's, or a list of ids. */
export type PriceChangeTarget = { categoryId: string } | { ids: readonly string[] };

/**
 * Changes the price of every targeted live product by `percent` (rounded to the cent) and bumps
 * its version and `updated_at`, in one statement.
 */
export async function changePrices(trx: Db, target: PriceChangeTarget, percent: number): Promise<ProductRow[]> {
  let q = trx
    .updateTable("catalog_product")
    .set({
      price_cents: sql<number>`round(price_cents * (100 + ${percent}::numeric) / 100)::integer`,
      version: nextVersion("version"),
      updated_at: sql<Date>`now()`,
    })
    .where("deleted_at", "is", null);
  q = "categoryId" in target ? q.where("category_id", "=", target.categoryId) : q.where(sql<boolean>`id = ANY(${[...target.ids]}::uuid[])`);
  return q.returningAll().execute();
}
