// A product table of the scratch application: Tether learns of it only through this file.
import { defineCollection, type MigrationSet } from "@tether/core";

export interface ProductRow {
  id: string;
  name: string;
  price_cents: number;
  version: string;
}

export const productMigrations: MigrationSet = {
  namespace: "shop",
  migrations: [
    {
      id: 1,
      name: "product",
      sql: "CREATE TABLE product (id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY, name text NOT NULL, price_cents integer NOT NULL, version bigint NOT NULL DEFAULT 1)",
    },
  ],
};

export const products = defineCollection<ProductRow>({
  name: "product",
  table: "product",
  index: "products",
  toDocument: (r) => ({ name: r.name, price_cents: r.price_cents }),
  mappings: { properties: { name: { type: "text" }, price_cents: { type: "integer" } } },
});
