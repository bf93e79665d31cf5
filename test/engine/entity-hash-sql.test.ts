import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { sql } from "kysely";
import { entityHash, entityHashSql } from "@tether/core/internal";
import { createTestContext, type TestContext } from "@tether/testkit";

describe("the entity hash", () => {
  let ctx: TestContext;
  beforeAll(async () => {
    ctx = await createTestContext();
  });
  afterAll(() => ctx.close());

  it("is computed identically by Postgres and by the process", async () => {
    const r = await sql<{ id: string; v: string; h: number }>`
      SELECT g::text AS id, (g % 7 + 1)::text AS v, ${sql.raw(entityHashSql("g", "g % 7 + 1"))} AS h
      FROM generate_series(1, 500) g`.execute(ctx.db);
    for (const row of r.rows) expect(row.h).toBe(entityHash(row.id, row.v));
  });
});
