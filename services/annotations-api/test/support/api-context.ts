import type { FastifyInstance } from "fastify";
import { sql } from "kysely";
import { migrate } from "@tether/core";
import { annotationMigrations, annotations } from "@tether/annotations";
import type { ElasticsearchSink } from "@tether/elasticsearch";
import type { EngineSink } from "@tether/search-sink";
import { createTestContext, type TestContext } from "@tether/testkit";
import { buildApp, type BuildAppOptions } from "../../src/app.js";

export const ADMIN_TOKEN = "test-admin-token";
export const admin = { authorization: `Bearer ${ADMIN_TOKEN}` };

export interface ApiContext<S extends EngineSink = ElasticsearchSink> extends TestContext<S> {
  app: FastifyInstance;
  /** Builds another app on this context's database (close it yourself). */
  build(overrides?: Partial<BuildAppOptions>): Promise<FastifyInstance>;
  jobs(): Promise<{ id: string; name: string; priority: number; tag: string; kwargs: { id: string; force?: boolean } }[]>;
  refresh(): Promise<void>;
}

/**
 * A test database with the annotation tables, an index for it, and an app wired to both.
 * `{ sink: "per-project" }`: the test project's engine (Elasticsearch, or OpenSearch in the
 * `opensearch` project) instead of Elasticsearch.
 */
export async function createApiContext(overrides?: Partial<BuildAppOptions>): Promise<ApiContext>;
export async function createApiContext(overrides: Partial<BuildAppOptions>, opts: { sink: "per-project" }): Promise<ApiContext<EngineSink>>;
export async function createApiContext(overrides: Partial<BuildAppOptions> = {}, opts: { sink?: "per-project" } = {}): Promise<ApiContext<EngineSink>> {
  const ctx: TestContext<EngineSink> = opts.sink === "per-project" ? await createTestContext({ sink: "per-project" }) : await createTestContext();
  await migrate(ctx.db, [annotationMigrations]);
  await ctx.sink.ensureIndex(annotations.index, annotations.mappings);
  // A generous direct-sync timeout: tests that read Elasticsearch right after a write must not
  // depend on a busy machine answering within the production default of 500 ms.
  const build = (o: Partial<BuildAppOptions> = {}) =>
    buildApp({ db: ctx.db, sink: ctx.sink, adminToken: ADMIN_TOKEN, directSyncTimeoutMs: 10_000, ...overrides, ...o });
  const app = await build();
  return {
    ...ctx,
    app,
    build,
    async jobs() {
      const r = await sql<{ id: string; name: string; priority: number; tag: string; kwargs: { id: string; force?: boolean } }>`
        SELECT id, name, priority, tag, kwargs FROM tether.job ORDER BY id`.execute(ctx.db);
      return r.rows;
    },
    refresh: () => ctx.sink.refreshIndex(annotations.index),
    async close() {
      await app.close();
      await ctx.close();
    },
  };
}
