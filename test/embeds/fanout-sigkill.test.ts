import { spawn } from "node:child_process";
import { fileURLToPath } from "node:url";
import { sql } from "kysely";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Drainer, enableCapture, verifyCollection } from "@tether/core/internal";
import { waitFor } from "@tether/testkit";
import { shopProducts } from "../support/shop.ts";
import { createShopContext, type ShopContext } from "../support/shop-context.ts";

const REPO = fileURLToPath(new URL("../../", import.meta.url));
const CONFIG = fileURLToPath(new URL("./fixtures/shop.config.ts", import.meta.url));

let ctx: ShopContext;
beforeAll(async () => {
  ctx = await createShopContext({ sink: "per-project" });
  await enableCapture(ctx.db, shopProducts, { graceMs: 0 });
});
afterAll(() => ctx.close());

interface FanoutRow {
  kwargs: { after?: string; done?: number; total?: number };
}

describe("a drainer killed in the middle of a fan-out", () => {
  it("loses nothing and expands no document twice: the next drainer resumes after the last chunk that committed", async () => {
    const category = (await sql<{ id: string }>`INSERT INTO shop_category (name) VALUES ('Before') RETURNING id::text AS id`.execute(ctx.db)).rows[0]!.id;
    await sql`INSERT INTO shop_product (name, category_id) SELECT 'p' || g, ${category}::bigint FROM generate_series(1, 1500) g`.execute(ctx.db);
    await new Drainer({ db: ctx.db, sink: ctx.sink, collections: [shopProducts] }).drainUntilEmpty();

    await sql`UPDATE shop_category SET name = 'After' WHERE id = ${category}::bigint`.execute(ctx.db);
    // `tether drain --until-empty` in a process of its own, expanding 10 documents per chunk.
    const child = spawn(process.execPath, ["--conditions=source", "--import", "tsx", "packages/cli/src/main.ts", "drain", "--until-empty", "--config", CONFIG], {
      cwd: REPO,
      env: { ...process.env, DATABASE_URL: ctx.databaseUrl, TETHER_INDEX_PREFIX: ctx.indexPrefix, ...ctx.serviceEnv(), LOG_LEVEL: "warn" },
      stdio: "ignore",
    });
    const exited = new Promise<NodeJS.Signals | null>((resolve) => child.once("exit", (_code, signal) => resolve(signal)));
    // Killed once its progress shows some chunks committed and most still to come.
    const seen = await waitFor(
      async () => {
        const r = await sql<FanoutRow>`SELECT kwargs FROM tether.job WHERE starts_with(name, 'fanout_')`.execute(ctx.db);
        const k = r.rows[0]?.kwargs;
        return k?.done !== undefined && k.done >= 30 ? k : undefined;
      },
      { what: "the child drainer to expand a few chunks", timeoutMs: 120_000, intervalMs: 10 },
    );
    child.kill("SIGKILL");
    expect(await exited).toBe("SIGKILL");
    expect(seen.total).toBe(1500);

    const left = (await sql<FanoutRow>`SELECT kwargs FROM tether.job WHERE starts_with(name, 'fanout_')`.execute(ctx.db)).rows[0];
    expect(left, "the fan-out job outlives the killed drainer").toBeDefined();
    const done = left!.kwargs.done!;
    expect(done).toBeGreaterThanOrEqual(30);
    expect(done).toBeLessThan(1500);

    const r = await new Drainer({ db: ctx.db, sink: ctx.sink, collections: [shopProducts] }).drainUntilEmpty();
    expect(r.error).toBeUndefined();
    // Every product got exactly one sync job from the fan-out: 1500 confirmed, none twice.
    const jobs = await sql<{ n: string }>`SELECT coalesce(sum(count), 0)::text AS n FROM tether.job_stat WHERE tag = 'fanout:category.update' AND name = 'sync_shop_product'`.execute(ctx.db);
    expect(Number(jobs.rows[0]!.n)).toBe(1500);
    const stale = await ctx.raw.count(shopProducts.index, { term: { category: "Before" } });
    expect(stale).toBe(0);
    expect(await ctx.raw.count(shopProducts.index, { term: { category: "After" } })).toBe(1500);
    expect((await verifyCollection(ctx.db, ctx.sink, shopProducts)).driftedTotal).toBe(0);
  });
});
