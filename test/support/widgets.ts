import { sql, type Kysely } from "kysely";
import { createDb, defineCollection, migrate, type Collection, type MigrationSet } from "@tether/core";
import type { ElasticsearchSink } from "@tether/elasticsearch";
import type { EngineSink } from "@tether/search-sink";
import { createTestContext, type TestContext, type TestContextOptions } from "@tether/testkit";

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

export interface WidgetContext<S extends EngineSink = ElasticsearchSink> extends TestContext<S> {
  /** Inserts rows directly, bypassing tether (no job, no sync). */
  insertRaw(n: number, owner?: string): Promise<string[]>;
  jobCount(): Promise<number>;
}

/** A test context with the widget table migrated and its index created; `{ sink: "per-project" }` as for createTestContext. */
export async function createWidgetContext(opts?: TestContextOptions): Promise<WidgetContext>;
export async function createWidgetContext(opts: TestContextOptions & { sink: "per-project" }): Promise<WidgetContext<EngineSink>>;
export async function createWidgetContext(opts: TestContextOptions & { sink?: "per-project" } = {}): Promise<WidgetContext<EngineSink>> {
  const ctx: TestContext<EngineSink> = opts.sink === "per-project" ? await createTestContext({ ...opts, sink: "per-project" }) : await createTestContext(opts);
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
