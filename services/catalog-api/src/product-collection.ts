import { defineCollection } from "@tether/core";
import type { EntityChange } from "@tether/core";
import type { CatalogDB, ProductDocumentRow, ProductRow } from "./catalog-db.js";
import { loadProductDocuments } from "./product-store.js";

/**
 * The product collection: uuid ids, soft deletes, and a document assembled from a join (the
 * product, its category's name, its stock), loaded in one query per batch by `load`. The two
 * other tables are declared as embeds, so a change to either reaches the documents that read
 * it, through the writer's verbs (`products.embeds.category`, `products.embeds.stock`) or plain
 * SQL with capture on.
 */
export const products = defineCollection<CatalogDB>()({
  table: "catalog_product",
  name: "catalog_product",
  id: "id",
  version: "version",
  deleted: "deleted_at",
  index: "catalog-products",
  load: (db, ids) => loadProductDocuments(db, ids),
  toDocument: (p: ProductDocumentRow) => ({
    sku: p.sku,
    name: p.name,
    description: p.description,
    price: p.price_cents / 100,
    price_cents: p.price_cents,
    category_id: p.category_id,
    category_name: p.category_name,
    stock: Number(p.stock),
    in_stock: Number(p.stock) > 0,
    created_at: p.created_at.toISOString(),
    updated_at: p.updated_at.toISOString(),
  }),
  mappings: {
    dynamic: "strict",
    properties: {
      sku: { type: "keyword" },
      name: { type: "text", fields: { raw: { type: "keyword", ignore_above: 256 } } },
      description: { type: "text" },
      // scaled_float lives in the mapper-extras module, absent from minimal distributions: cents are exact as a long.
      price: { type: "double" },
      price_cents: { type: "long" },
      category_id: { type: "keyword" },
      category_name: { type: "text", fields: { raw: { type: "keyword", ignore_above: 256 } } },
      stock: { type: "integer" },
      in_stock: { type: "boolean" },
      created_at: { type: "date" },
      updated_at: { type: "date" },
    },
  },
  reindexScopes: {
    category: { kind: "equals", column: "category_id", description: "every product of one category (its uuid)" },
    updated: { kind: "range", column: "updated_at", description: "last edit of the product; from inclusive, to exclusive" },
    ids: { kind: "ids", description: "a list of product uuids" },
  },
  embeds: {
    // catalog_category.id = catalog_product.category_id: one category, many products, so a rename
    // fans out (one job in the rename's transaction, the products re-synced by the drainer).
    category: { table: "catalog_category", on: { id: "category_id" }, columns: ["name"], tag: "category" },
    // catalog_stock.product_id = catalog_product.id: a stock row names its product (direct), which
    // the stock's own transaction bumps and the writer syncs at once.
    stock: { table: "catalog_stock", on: { product_id: "id" }, primaryKey: "product_id", columns: ["quantity"], tag: "stock" },
  },
});

/**
 * A product row a write to the product table changed (a create, a price change), as
 * `writeWithJobs` takes it. The writer re-reads the row through the collection's `load`
 * (category name, stock) in the write's transaction before it syncs, so the two joined fields
 * are placeholders here.
 */
export function productChange(row: ProductRow): EntityChange<ProductDocumentRow> {
  return { id: row.id, row: { ...row, category_name: "", stock: 0 } };
}
