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
    {
      id: 2,
      name: "catalog_product_category_id",
      sql: `
-- A category's rename fans out to its products, walked in id order a chunk at a time by the
-- drainer: (category_id, id) serves those chunks and the category re-index scope, so it
-- replaces the index on category_id alone.
CREATE INDEX catalog_product_category_id_idx ON catalog_product (category_id, id);
DROP INDEX catalog_product_category_idx;
`,
    },
    {
      id: 3,
      name: "catalog_product_entity_key",
      sql: `
-- tether verify compares uuid ids in buckets of a hash of the id (tether.entity_key): this index
-- serves each bucket's range instead of a scan of the table per window of buckets.
CREATE INDEX catalog_product_entity_key_idx ON catalog_product (tether.entity_key(id::text));
`,
    },
  ],
};
