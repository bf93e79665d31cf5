import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { sql } from "kysely";
import { createDb, createWriter } from "@tether/core";
import { PREPARE_MARK } from "@tether/core/internal";
import { createWidgetContext, widgets, type WidgetContext } from "../support/widgets.js";

const preparedOnThisConnection = async (db: ReturnType<typeof createDb>) =>
  (await sql<{ name: string; statement: string }>`SELECT name, statement FROM pg_prepared_statements ORDER BY name`.execute(db)).rows;

describe("createDb({ preparedStatements: true })", () => {
  let ctx: WidgetContext;
  beforeAll(async () => {
    ctx = await createWidgetContext();
  });
  afterAll(() => ctx.close());

  it("runs the writer's per-write statements as named statements, one per statement shape, and the application's own unnamed", async () => {
    const db = createDb({ connectionString: ctx.databaseUrl, max: 1, preparedStatements: true });
    try {
      const writer = createWriter({});
      const ids: string[] = [];
      for (let i = 0; i < 5; i++) ids.push((await writer.createWithJob(db, widgets, { owner: "p", title: `t${i}` })).changes[0]!.id);
      for (const id of ids.slice(0, 3)) await writer.updateWithJob(db, widgets, id, { title: "edited" });
      await sql`SELECT count(*) FROM widget`.execute(db);
      const named = await preparedOnThisConnection(db);
      // One insert shape, one update shape: parsed once each on this connection, whatever the number of writes.
      expect(named).toHaveLength(2);
      for (const s of named) {
        expect(s.name).toMatch(/^tether_[0-9a-f]{24}$/);
        expect(s.statement.startsWith(PREPARE_MARK)).toBe(true);
      }
      const rows = await sql<{ title: string; n: string }>`SELECT title, count(*) AS n FROM widget WHERE owner = 'p' GROUP BY title ORDER BY title`.execute(ctx.db);
      expect(rows.rows.map((r) => [r.title, Number(r.n)])).toEqual([["edited", 3], ["t3", 1], ["t4", 1]]);
    } finally {
      await db.destroy();
    }
  });

  it("names nothing without the option", async () => {
    const db = createDb({ connectionString: ctx.databaseUrl, max: 1 });
    try {
      await createWriter({}).createWithJob(db, widgets, { owner: "u", title: "unnamed" });
      expect(await preparedOnThisConnection(db)).toEqual([]);
    } finally {
      await db.destroy();
    }
  });

  it("keeps at most 200 named statements on one connection and runs further shapes unnamed", async () => {
    const db = createDb({ connectionString: ctx.databaseUrl, max: 1, preparedStatements: true });
    try {
      for (let i = 0; i < 205; i++) expect((await sql<{ x: number }>`${sql.raw(`${PREPARE_MARK}SELECT ${i}::int AS x`)}`.execute(db)).rows[0]!.x).toBe(i);
      // Past the cap a statement still runs, unnamed, and the named ones still answer.
      expect((await sql<{ x: number }>`${sql.raw(`${PREPARE_MARK}SELECT 3::int AS x`)}`.execute(db)).rows[0]!.x).toBe(3);
      expect(await preparedOnThisConnection(db)).toHaveLength(200);
    } finally {
      await db.destroy();
    }
  });
});
