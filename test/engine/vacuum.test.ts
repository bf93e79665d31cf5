import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { sql } from "kysely";
import { runMaintenance } from "@tether/core";
import { createTestContext, type TestContext } from "@tether/testkit";

describe("maintenance", () => {
  let ctx: TestContext;
  beforeAll(async () => {
    ctx = await createTestContext({ poolSize: 2 });
  });
  afterAll(() => ctx.close());

  const deadTuples = async () => {
    const r = await sql<{ dead: string }>`SELECT n_dead_tup AS dead FROM pg_stat_user_tables WHERE schemaname = 'tether' AND relname = 'job'`.execute(ctx.db);
    return Number(r.rows[0]?.dead ?? 0);
  };

  it("vacuums the job table once confirmed jobs leave enough dead tuples behind", async () => {
    await ctx.db.connection().execute(async (conn) => {
      await sql`INSERT INTO tether.job (name, tag, kwargs) SELECT 'sync_x', 'live', jsonb_build_object('id', g::text) FROM generate_series(1, 20000) g`.execute(conn);
      await sql`DELETE FROM tether.job`.execute(conn);
      await sql`SELECT pg_stat_force_next_flush()`.execute(conn);
    });
    const deadline = Date.now() + 10_000;
    while ((await deadTuples()) < 20_000 && Date.now() < deadline) await sql`SELECT pg_stat_clear_snapshot()`.execute(ctx.db);
    expect(await deadTuples()).toBeGreaterThanOrEqual(20_000);

    const quiet = await runMaintenance(ctx.db, { vacuumMinDeadTuples: 50_000 });
    expect(quiet.vacuumed).toBeUndefined();
    const r = await runMaintenance(ctx.db, { vacuumMinDeadTuples: 10_000 });
    expect(r).toMatchObject({ leader: true, vacuumed: true });
    expect(await deadTuples()).toBeLessThan(20_000);
  });
});
