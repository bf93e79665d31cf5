import { sql } from "kysely";
import { migrate } from "@tether/core";
import type { EngineSink } from "@tether/search-sink";
import { createTestContext, type TestContext, type TestContextOptions } from "@tether/testkit";
import { shopMigrations, shopProducts } from "./shop.ts";

export interface ShopContext<S extends EngineSink = EngineSink> extends TestContext<S> {
  /** Counts of tether.job rows by name. */
  jobs(): Promise<Record<string, number>>;
}

/** A test context with the shop's tables migrated and the products' index created. */
export async function createShopContext(opts: TestContextOptions & { sink?: "per-project" } = {}): Promise<ShopContext> {
  const ctx: TestContext<EngineSink> = opts.sink === "per-project" ? await createTestContext({ ...opts, sink: "per-project" }) : await createTestContext(opts);
  await migrate(ctx.db, [shopMigrations]);
  await ctx.sink.ensureIndex(shopProducts.index, shopProducts.mappings);
  return {
    ...ctx,
    async jobs() {
      const r = await sql<{ name: string; n: string }>`SELECT name, count(*) AS n FROM tether.job GROUP BY name`.execute(ctx.db);
      return Object.fromEntries(r.rows.map((x) => [x.name, Number(x.n)]));
    },
  };
}
