import { defineCollection, type Collection, type MigrationSet } from "@tether/core";

/** One row of the verify-scale tables (int ids or uuid ids; same columns otherwise). */
export interface ScaleItemRow {
  id: string;
  name: string;
  category: string;
  price: number;
  version: string;
  deleted_at: Date | null;
}

export type ScaleIdType = "int" | "uuid";

/** The table of each id type. */
export const SCALE_TABLES: Record<ScaleIdType, string> = { int: "scale_item_int", uuid: "scale_item_uuid" };

/**
 * Two tables of the same small items, one keyed by bigint, one by uuid. No primary key or
 * bucket-key index at first: the loader adds them after each bulk insert (`scaleIndexes`).
 */
export const scaleItemMigrations: MigrationSet = {
  namespace: "verify_scale",
  migrations: [
    {
      id: 1,
      name: "scale_items",
      sql: `
CREATE TABLE scale_item_int (id bigint NOT NULL, name text NOT NULL, category text NOT NULL, price integer NOT NULL, version bigint NOT NULL DEFAULT 1, deleted_at timestamptz);
CREATE TABLE scale_item_uuid (id uuid NOT NULL, name text NOT NULL, category text NOT NULL, price integer NOT NULL, version bigint NOT NULL DEFAULT 1, deleted_at timestamptz);
`,
    },
  ],
};

const mappings = { properties: { name: { type: "text" }, category: { type: "keyword" }, price: { type: "integer" } } };

function scaleCollection(idType: ScaleIdType): Collection<ScaleItemRow> {
  return defineCollection<ScaleItemRow>({
    name: SCALE_TABLES[idType],
    table: SCALE_TABLES[idType],
    idType: idType === "int" ? "bigint" : "uuid",
    index: `items_${idType}`,
    deletedColumn: "deleted_at",
    toDocument: (r) => ({ name: r.name, category: r.category, price: r.price }),
    mappings,
    reindexScopes: { ids: { kind: "ids" } },
  });
}

export const SCALE_COLLECTIONS: Record<ScaleIdType, Collection<ScaleItemRow>> = { int: scaleCollection("int"), uuid: scaleCollection("uuid") };
