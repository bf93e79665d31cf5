import { sql, type Kysely } from "kysely";
import { createDb, defineCollection, migrate, type Collection, type MigrationSet } from "@tether/core";
import { createTestContext, type TestContext } from "@tether/testkit";

/** A minimal domain for engine tests: core knows nothing about it. */
export interface WidgetRow {
  id: string;
  owner: string;
  title: string;
  body: string | null;
  version: string;
  deleted_at: Date | null;
  updated_at: Date;
}

export const widgetMigrations: MigrationSet = {
  namespace: "widgets",
  migrations: [
    {
      id: 1,
      name: "widget",
      sql: `CREATE TABLE widget (
        id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
        owner text NOT NULL,
        title text NOT NULL,
        body text,
        version bigint NOT NULL DEFAULT 1,
        deleted_at timestamptz,
        updated_at timestamptz NOT NULL DEFAULT now()
      )`,
    },
  ],
};

export const widgets: Collection<WidgetRow> = defineCollection<WidgetRow>({
  name: "widget",
  table: "widget",
  index: "widgets",
  deletedColumn: "deleted_at",
  toDocument: (r) => ({ owner: r.owner, title: r.title, body: r.body }),
  mappings: { properties: { owner: { type: "keyword" }, title: { type: "text" }, body: { type: "text" } } },
  reindexScopes: { owner: { kind: "equals", column: "owner" }, updated: { kind: "range", column: "updated_at" }, ids: { kind: "ids" } },
});

export interface WidgetContext extends TestContext {
  /** Inserts rows directly, bypassing tether (no job, no sync). */
  insertRaw(n: number, owner?: string): Promise<string[]>;
  jobCount(): Promise<number>;
}

export async function createWidgetContext(opts: { poolSize?: number } = {}): Promise<WidgetContext> {
  const ctx = await createTestContext(opts);
  await migrate(ctx.db, [widgetMigrations]);
  await ctx.sink.ensureIndex(widgets.index, widgets.mappings);
  return {
    ...ctx,
    async insertRaw(n, owner = "raw") {
      const r = await sql<{ id: string }>`INSERT INTO widget (owner, title) SELECT ${owner}, 'w' || g FROM generate_series(1, ${n}) g RETURNING id`.execute(ctx.db);
      return r.rows.map((x) => String(x.id));
    },
    async jobCount() {
      const r = await sql<{ n: string }>`SELECT count(*) AS n FROM tether.job`.execute(ctx.db);
      return Number(r.rows[0]!.n);
    },
  };
}

export { createDb, type Kysely };
