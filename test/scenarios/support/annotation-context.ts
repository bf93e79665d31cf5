import { sql } from "kysely";
import { migrate } from "@tether/core";
import { annotationMigrations, annotations } from "@tether/annotations";
import type { ElasticsearchSink } from "@tether/elasticsearch";
import type { EngineSink } from "@tether/search-sink";
import { createTestContext, type TestContext, type TestContextOptions } from "@tether/testkit";

export { annotations };

/**
 * A test context with the reference domain migrated and its index created; `{ sink:
 * "per-project" }` on the test project's sink (see createTestContext).
 */
export async function createAnnotationContext(opts?: TestContextOptions): Promise<TestContext<ElasticsearchSink>>;
export async function createAnnotationContext(opts: TestContextOptions & { sink: "per-project" }): Promise<TestContext<EngineSink>>;
export async function createAnnotationContext(opts: TestContextOptions & { sink?: "per-project" } = {}): Promise<TestContext<EngineSink>> {
  const ctx = opts.sink === "per-project" ? await createTestContext({ ...opts, sink: "per-project" }) : await createTestContext(opts);
  await migrate(ctx.db, [annotationMigrations]);
  await ctx.sink.ensureIndex(annotations.index, annotations.mappings);
  return ctx;
}

/** A valid POST /api/annotations body. */
export function annotationBody(i: number, user = `acct:user${i % 7}@example.com`): Record<string, unknown> {
  return { uri: `https://example.com/page/${i % 13}`, text: `note ${i}`, tags: [`t${i % 5}`], user, group: "__world__" };
}

/** Inserts rows with plain SQL, bypassing tether (no job, no sync): a migration's footprint. */
export async function insertRawAnnotations(db: TestContext["db"], n: number, user = "acct:migration@example.com"): Promise<string[]> {
  const r = await sql<{ id: string }>`
    INSERT INTO annotation (userid, target_uri, text)
    SELECT ${user}, 'https://example.com/migrated/' || g, 'migrated ' || g FROM generate_series(1, ${n}) g
    RETURNING id`.execute(db);
  return r.rows.map((x) => String(x.id));
}

export async function countRows(db: TestContext["db"], query: string): Promise<number> {
  const r = await sql<{ n: string }>`${sql.raw(query)}`.execute(db);
  return Number(r.rows[0]?.n ?? 0);
}
