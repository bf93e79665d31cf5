import type { MigrationSet } from "@tether/core";

/** The catalog's own tables: categories, products (uuid ids) and their stock, apart. */
export const catalogMigrations: MigrationSet = {
  namespace: "catalog",
  migrations: [
    {
      id: 1,
      name: "catalog",
      sql: `
CREATE TABLE catalog_category (
  id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  name text NOT NULL,
  updated_at timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE catalog_product (
  id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  sku text NOT NULL UNIQUE,
  name text NOT NULL,
  description text NOT NULL DEFAULT '',
  price_cents integer NOT NULL CHECK (price_cents >= 0),
  category_id uuid NOT NULL REFERENCES catalog_category (id),
  -- Bumped in every transaction that changes the product's document, a rename of its category
  -- included: the document carries it as its external version.
  version bigint NOT NULL DEFAULT 1,
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now(),
  deleted_at timestamptz
);
CREATE INDEX catalog_product_category_idx ON catalog_product (category_id);
CREATE INDEX catalog_product_updated_idx ON catalog_product (updated_at);

CREATE TABLE catalog_stock (
  product_id uuid PRIMARY KEY REFERENCES catalog_product (id),
  quantity integer NOT NULL CHECK (quantity >= 0),
  updated_at timestamptz NOT NULL DEFAULT now()
);
`,
    },
  ],
};
