import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { sql } from "kysely";
import { createWidgetContext, type WidgetContext } from "../support/widgets.js";

describe("the real services", () => {
  let ctx: WidgetContext;
  beforeAll(async () => {
    ctx = await createWidgetContext();
  });
  afterAll(() => ctx.close());

  it("writes a row to Postgres and a document to Elasticsearch through the real client, and reads both back", async () => {
    const [id] = await ctx.insertRaw(1, "smoke");
    const row = await sql<{ owner: string }>`SELECT owner FROM widget WHERE id = ${id}`.execute(ctx.db);
    expect(row.rows[0]?.owner).toBe("smoke");

    const index = ctx.sink.indexName("widgets");
    await ctx.sink.client.index({ index, id: String(id), document: { owner: "smoke" } });
    const doc = await ctx.sink.client.get<{ owner: string }>({ index, id: String(id) });
    expect(doc._source?.owner).toBe("smoke");
    expect(doc.found).toBe(true);
  });

  it("gives each test file its own database cloned from the migrated template", async () => {
    const r = await sql<{ n: string }>`SELECT count(*) AS n FROM tether.job`.execute(ctx.db);
    expect(Number(r.rows[0]!.n)).toBe(0);
    expect(ctx.databaseUrl).toMatch(/tether_t_/);
  });
});
