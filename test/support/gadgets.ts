import { defineCollection, migrate, type Collection, type MigrationSet } from "@tether/core";
import type { EngineSink } from "@tether/search-sink";
import { createTestContext, type TestContext } from "@tether/testkit";

/** A collection keyed by uuid (the database generates them). */
export interface GadgetRow {
  id: string;
  name: string;
  version: string;
  deleted_at: Date | null;
}

export const gadgetMigrations: MigrationSet = {
  namespace: "gadgets",
  migrations: [
    {
      id: 1,
      name: "gadget",
      sql: `CREATE TABLE gadget (
        id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
        name text NOT NULL,
        version bigint NOT NULL DEFAULT 1,
        deleted_at timestamptz
      );
      -- Serves the bucketed verify's key ranges (docs/verify.md).
      CREATE INDEX gadget_entity_key_idx ON gadget (tether.entity_key(id::text));`,
    },
  ],
};

export const gadgets: Collection<GadgetRow> = defineCollection<GadgetRow>({
  name: "gadget",
  table: "gadget",
  index: "gadgets",
  deletedColumn: "deleted_at",
  toDocument: (r) => ({ name: r.name }),
  mappings: { properties: { name: { type: "text" } } },
  reindexScopes: { ids: { kind: "ids" } },
});

/** A test context (the project's sink) with the gadget table migrated and its index made. */
export async function createGadgetContext(): Promise<TestContext<EngineSink>> {
  const ctx = await createTestContext({ sink: "per-project" });
  await migrate(ctx.db, [gadgetMigrations]);
  await ctx.sink.ensureIndex(gadgets.index, gadgets.mappings);
  return ctx;
}
