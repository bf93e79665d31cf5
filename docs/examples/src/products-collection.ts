import { defineCollection, type MigrationSet } from "@tether/core";

export interface ProductRow {
  id: string;
  name: string;
  price_cents: number;
  version: string; // bumped by every write; Tether compares it, not the content
  deleted_at: Date | null;
}

export const productMigrations: MigrationSet = {
  namespace: "shop",
  migrations: [
    {
      id: 1,
      name: "product",
      sql: `CREATE TABLE product (
        id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
        name text NOT NULL,
        price_cents integer NOT NULL,
        version bigint NOT NULL DEFAULT 1,
        deleted_at timestamptz
      )`,
    },
  ],
};

export const products = defineCollection<ProductRow>({
  name: "product",
  table: "product",
  index: "products",
  deletedColumn: "deleted_at",
  toDocument: (row) => ({ name: row.name, price_cents: row.price_cents }),
  mappings: { properties: { name: { type: "text" }, price_cents: { type: "integer" } } },
  reindexScopes: { ids: { kind: "ids" } },
});
