import type { Generated, Selectable } from "kysely";

/** The catalog's tables, as Kysely sees them. `bigint` columns arrive as strings. */
export interface CatalogDB {
  catalog_category: CatalogCategoryTable;
  catalog_product: CatalogProductTable;
  catalog_stock: CatalogStockTable;
}

export interface CatalogCategoryTable {
  id: Generated<string>;
  name: string;
  updated_at: Generated<Date>;
}

export interface CatalogProductTable {
  /** uuid, `gen_random_uuid()`. */
  id: Generated<string>;
  sku: string;
  name: string;
  description: Generated<string>;
  price_cents: number;
  category_id: string;
  /** Bumped by every write that changes the product's document (its category's rename too). */
  version: Generated<string>;
  created_at: Generated<Date>;
  updated_at: Generated<Date>;
  deleted_at: Date | null;
}

export interface CatalogStockTable {
  product_id: string;
  quantity: number;
  updated_at: Generated<Date>;
}

export type ProductRow = Selectable<CatalogProductTable>;
export type CategoryRow = Selectable<CatalogCategoryTable>;

/** A product as its document is built: the row, its category's name and its stock (one join). */
export interface ProductDocumentRow extends ProductRow {
  category_name: string;
  stock: number;
}
