import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Kysely, PostgresDialect, sql } from "kysely";
import pg from "pg";
import { createWriter, defineCollection, ValidationError, type Collection } from "@tether/core";
import { createWidgetContext, type WidgetContext, type WidgetRow } from "../support/widgets.js";

type LoudRow = WidgetRow & { shout: string };

/**
 * A document built from more than the row (a computed column here; in an app, a join), declared
 * as one SELECT over `rows`. Rows of owner "hidden" are left out, as an inner join that finds
 * nothing would. `parameter`: the same query with a parameter of its own (compiled per write).
 */
const loudWidgets = (parameter: boolean): Collection<LoudRow> =>
  defineCollection<LoudRow>({
    name: "widget",
    table: "widget",
    index: "widgets",
    deletedColumn: "deleted_at",
    loadQuery: (db, rows) =>
      db
        .selectFrom(`${rows} as w`)
        .selectAll("w")
        .select(sql<string>`upper(w.title)`.as("shout"))
        .where(parameter ? sql<boolean>`w.owner <> ${"hidden"}` : sql<boolean>`w.owner <> 'hidden'`),
    toDocument: (r) => ({ owner: r.owner, title: r.shout, body: r.body }),
  });

async function jobCount(ctx: WidgetContext, id: string): Promise<number> {
  const r = await sql<{ n: string }>`SELECT count(*) AS n FROM tether.job WHERE kwargs->>'id' = ${id}`.execute(ctx.db);
  return Number(r.rows[0]!.n);
}

describe("a collection whose documents are one SELECT (loadQuery)", () => {
  let ctx: WidgetContext;
  beforeAll(async () => {
    ctx = await createWidgetContext();
  });
  afterAll(() => ctx.close());

  for (const parameter of [false, true]) {
    it(`writes the row, its job and the row as the query builds it in one statement, and syncs that document (${parameter ? "a query with a parameter of its own" : "a query without parameters"})`, async () => {
      const loud = loudWidgets(parameter);
      const statements: string[] = [];
      const pool = new pg.Pool({ connectionString: ctx.databaseUrl, max: 1 });
      const db = new Kysely<any>({ dialect: new PostgresDialect({ pool }), log: (e) => void (e.level === "query" && statements.push(e.query.sql)) });
      try {
        const writer = createWriter({ sink: ctx.sink, directSyncTimeoutMs: 10_000 });
        // The writer reads once per collection whether the table's own ids are inside the id rule.
        await writer.createWithJob(db, loud, { owner: "warm", title: "up" });
        const one = async <T>(what: string, call: () => Promise<T>): Promise<T> => {
          statements.length = 0;
          const r = await call();
          expect(statements, what).toHaveLength(1);
          expect(statements[0], what).toMatch(/^\/\* tether:prepared \*\/ WITH "tether_rows" AS \((insert|update) /i);
          return r;
        };
        const created = await one("create", () => writer.createWithJob(db, loud, { owner: "loud", title: "quiet" }));
        const id = created.changes[0]!.id;
        expect(created.sync).toBe("ok");
        expect(created.row).toMatchObject({ id, owner: "loud", title: "quiet", shout: "QUIET" });
        expect(Object.keys(created.row!).filter((k) => k.startsWith("__tether"))).toEqual([]);
        expect(await ctx.sink.readDocument("widgets", id)).toMatchObject({ title: "QUIET" });

        const updated = await one("update", () => writer.updateWithJob(db, loud, id, { title: "louder" }));
        expect(updated.row).toMatchObject({ title: "louder", shout: "LOUDER" });
        expect(await ctx.sink.readDocument("widgets", id)).toMatchObject({ title: "LOUDER" });

        const deleted = await one("soft delete", () => writer.deleteWithJob(db, loud, id));
        expect(deleted.row).toMatchObject({ shout: "LOUDER" });
        expect((deleted.row as LoudRow).deleted_at).toBeInstanceOf(Date);
        expect((await ctx.sink.fetchStates("widgets", [id])).get(id)).toEqual({ version: Number((deleted.row as LoudRow).version), deleted: true });
        expect(await jobCount(ctx, id)).toBe(3);

        // In the caller's transaction: the same one statement, then the capture flag reset for the caller's own statements.
        statements.length = 0;
        const inTx = await db.transaction().execute((trx) => writer.createWithJob(trx, loud, { owner: "loud", title: "in a transaction" }));
        expect(statements.filter((q) => /tether_rows/.test(q))).toHaveLength(1);
        expect(inTx.row).toMatchObject({ shout: "IN A TRANSACTION" });
        expect(inTx.sync).toBe("deferred");
      } finally {
        await db.destroy();
      }
    });
  }

  it("leaves a row the query does not return out of the direct sync, to its job, and still returns the row as the table holds it", async () => {
    const loud = loudWidgets(false);
    const writer = createWriter({ sink: ctx.sink, directSyncTimeoutMs: 10_000 });
    const res = await writer.createWithJob(ctx.db, loud, { owner: "hidden", title: "unseen" });
    const id = res.changes[0]!.id;
    expect(res.row).toMatchObject({ id, owner: "hidden", title: "unseen" });
    expect(res.row).not.toHaveProperty("shout");
    // Nothing left to sync directly.
    expect(res.sync).toBe("skipped");
    expect((await ctx.sink.fetchStates("widgets", [id])).has(id)).toBe(false);
    expect(await jobCount(ctx, id)).toBe(1);
  });

  it("refuses an update of a missing row and writes nothing", async () => {
    const writer = createWriter({});
    await expect(writer.updateWithJob(ctx.db, loudWidgets(false), "999999999", { title: "x" })).rejects.toThrow(/widget 999999999/);
    expect(await jobCount(ctx, "999999999")).toBe(0);
  });

  it("reads a batch of ids through the same query wherever load runs (the drainer, verify, the trace)", async () => {
    const loud = loudWidgets(true);
    const ids = await ctx.insertRaw(2, "loud");
    const [hidden] = await ctx.insertRaw(1, "hidden");
    const rows = await loud.load!(ctx.db, [...ids, hidden!, "424242424"]);
    expect(rows.map((r) => [r.id, r.shout]).sort()).toEqual(ids.map((id, i) => [id, `W${i + 1}`]).sort());
  });

  it("refuses a collection that declares both load and loadQuery: one definition of its documents", () => {
    expect(() =>
      defineCollection<LoudRow>({
        name: "widget",
        table: "widget",
        index: "widgets",
        load: async () => [],
        loadQuery: (db, rows) => db.selectFrom(rows).selectAll(),
        toDocument: (r) => ({ title: r.title }),
      }),
    ).toThrow(ValidationError);
  });
});
