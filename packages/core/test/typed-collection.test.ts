import type { ColumnType, Generated, Kysely, Selectable } from "kysely";
import { describe, expect, expectTypeOf, it } from "vitest";
import { createWriter, defineCollection, type TypedCollection } from "../src/index.js";

// An application's Kysely database interface, as kysely-codegen would write it.
interface DB {
  product: {
    id: Generated<string>;
    name: string;
    price_cents: number;
    category_id: string;
    version: Generated<string>;
    deleted_at: Date | null;
    updated_at: ColumnType<Date, Date | string | undefined, Date | string>;
  };
  category: { id: Generated<string>; name: string };
}

const products = defineCollection<DB>()({
  table: "product",
  id: "id",
  version: "version",
  deleted: "deleted_at",
  index: "products",
  toDocument: (row) => {
    expectTypeOf(row).toEqualTypeOf<Selectable<DB["product"]>>();
    return { name: row.name, price_cents: row.price_cents };
  },
  reindexScopes: { category: { kind: "equals", column: "category_id" }, updated: { kind: "range", column: "updated_at" } },
});

// A document assembled from a join: `load` reads the rows, `toDocument` and the writer see its type.
type ProductWithCategory = Selectable<DB["product"]> & { category_name: string };
const loadWithCategory = async (db: Kysely<DB>, ids: readonly string[]): Promise<ProductWithCategory[]> => {
  expectTypeOf(ids).toEqualTypeOf<readonly string[]>();
  void db;
  return [];
};
const joined = defineCollection<DB>()({
  table: "product",
  id: "id",
  version: "version",
  index: "products",
  load: loadWithCategory,
  toDocument: (row) => {
    expectTypeOf(row).toEqualTypeOf<ProductWithCategory>();
    return { name: row.name, category: row.category_name };
  },
});

// Never called: the compiler checks these calls, `pnpm typecheck` fails if one stops compiling
// or if an @ts-expect-error line starts compiling.
async function writes(db: Kysely<DB>) {
  const writer = createWriter();
  const { row } = await writer.createWithJob(db, products, { name: "Teapot", price_cents: 2450, category_id: "c1" });
  expectTypeOf(row).toEqualTypeOf<Selectable<DB["product"]> | undefined>();
  await writer.updateWithJob(db, products, "1", { price_cents: 1990 });
  await writer.writeWithJobs(db, products, async (trx) => {
    const rows = await trx.updateTable("product").set({ price_cents: 1 }).where("category_id", "=", "c1").returningAll().execute();
    return rows.map((r) => ({ id: r.id, row: r }));
  });

  const loaded = await writer.createWithJob(db, joined, { name: "Teapot", price_cents: 2450, category_id: "c1" });
  expectTypeOf(loaded.row).toEqualTypeOf<ProductWithCategory | undefined>();
  defineCollection<DB>()({
    table: "product", id: "id", version: "version", index: "x",
    // @ts-expect-error -- a loader's rows must carry the table's columns (id, version, …)
    load: async () => [{ category_name: "Tea" }],
    toDocument: () => ({}),
  });

  // @ts-expect-error -- a value of the wrong type
  await writer.createWithJob(db, products, { name: "Teapot", price_cents: "24.50", category_id: "c1" });
  // @ts-expect-error -- a column the table does not have
  await writer.createWithJob(db, products, { name: "Teapot", price_cents: 1, category_id: "c1", colour: "blue" });
  // @ts-expect-error -- a required column missing
  await writer.createWithJob(db, products, { name: "Teapot" });
  // @ts-expect-error -- a patch of the wrong type
  await writer.updateWithJob(db, products, "1", { price_cents: "cheap" });
  await writer.writeWithJobs(db, products, async (trx) => {
    // @ts-expect-error -- the callback's transaction is typed over DB too
    await trx.updateTable("produkt").set({ price_cents: 1 }).execute();
    return [];
  });
}

describe("defineCollection<DB>(), typed over the application's Kysely database", () => {
  it("rejects a table, a column and a scope column DB does not have, at compile time", () => {
    const bad = () => [
      // @ts-expect-error -- no such table
      defineCollection<DB>()({ table: "produkt", id: "id", version: "version", index: "x", toDocument: () => ({}) }),
      // @ts-expect-error -- no such version column
      defineCollection<DB>()({ table: "product", id: "id", version: "revision", index: "x", toDocument: () => ({}) }),
      // @ts-expect-error -- no such soft-delete column
      defineCollection<DB>()({ table: "product", id: "id", version: "version", deleted: "removed_at", index: "x", toDocument: () => ({}) }),
      defineCollection<DB>()({
        table: "product", id: "id", version: "version", index: "x", toDocument: () => ({}),
        // @ts-expect-error -- no such column for a re-index scope
        reindexScopes: { by: { kind: "equals", column: "brand" } },
      }),
      // @ts-expect-error -- the document builder reads a column the row does not have
      defineCollection<DB>()({ table: "category", id: "id", version: "id", index: "x", toDocument: (r) => ({ n: r.title }) }),
    ];
    expect(typeof bad).toBe("function");
    expect(typeof writes).toBe("function");
  });

  it("fills the same runtime collection as the untyped form", () => {
    expectTypeOf(products).toEqualTypeOf<TypedCollection<DB, "product">>();
    expect(products).toMatchObject({
      name: "product",
      table: "product",
      idColumn: "id",
      versionColumn: "version",
      deletedColumn: "deleted_at",
      jobName: "sync_product",
      index: "products",
      reindexScopes: { category: { kind: "equals", column: "category_id" }, updated: { kind: "range", column: "updated_at" } },
    });
    expect(products.isDeleted({ deleted_at: new Date() } as never)).toBe(true);
    expect(products.load).toBeUndefined();
    expect(joined.load).toBe(loadWithCategory);
  });

  it("refuses a load that is not a function", () => {
    expect(() => defineCollection({ name: "p", table: "p", index: "p", toDocument: () => ({}), load: "SELECT *" as never })).toThrow(/collection\.load/);
  });
});
