import type { FastifyInstance } from "fastify";
import { sql, type Kysely } from "kysely";
import { migrate } from "@tether/core";
import type { ElasticsearchSink } from "@tether/elasticsearch";
import type { EngineSink } from "@tether/search-sink";
import { createTestContext, type TestContext } from "@tether/testkit";
import { buildApp, type BuildAppOptions } from "../../src/app.js";
import type { CatalogDB } from "../../src/catalog-db.js";
import { catalogMigrations } from "../../src/catalog-migrations.js";
import { products } from "../../src/product-collection.js";

export const ADMIN_TOKEN = "catalog-test-token";
export const admin = { authorization: `Bearer ${ADMIN_TOKEN}` };

export interface QueuedJob {
  id: string;
  name: string;
  tag: string;
  priority: number;
  kwargs: { id: string; force?: boolean };
}

export interface CatalogContext<S extends EngineSink = ElasticsearchSink> extends TestContext<S> {
  catalogDb: Kysely<CatalogDB>;
  app: FastifyInstance;
  /** Builds another app on this context's database (closed with the context). */
  build(overrides?: Partial<BuildAppOptions>): Promise<FastifyInstance>;
  jobs(): Promise<QueuedJob[]>;
  /** The product's document in the engine (its `_source`), or undefined. */
  document(id: string): Promise<Record<string, unknown> | undefined>;
  refresh(): Promise<void>;
  /** Sends a request and expects `status`; returns the JSON body. */
  call<T = any>(method: "GET" | "POST" | "PATCH" | "PUT" | "DELETE", url: string, payload?: object, status?: number, app?: FastifyInstance): Promise<T>;
}

/**
 * A test database with the catalog's tables, the products index, and an app wired to both.
 * `{ sink: "per-project" }`: the test project's engine (Elasticsearch, or OpenSearch in the
 * `opensearch` project) instead of Elasticsearch.
 */
export async function createCatalogContext(overrides?: Partial<BuildAppOptions>): Promise<CatalogContext>;
export async function createCatalogContext(overrides: Partial<BuildAppOptions>, opts: { sink: "per-project" }): Promise<CatalogContext<EngineSink>>;
export async function createCatalogContext(overrides: Partial<BuildAppOptions> = {}, opts: { sink?: "per-project" } = {}): Promise<CatalogContext<EngineSink>> {
  const ctx: TestContext<EngineSink> = opts.sink === "per-project" ? await createTestContext({ sink: "per-project" }) : await createTestContext();
  const catalogDb = ctx.db as Kysely<CatalogDB>;
  await migrate(ctx.db, [catalogMigrations]);
  await ctx.sink.ensureIndex(products.index, products.mappings);
  const apps: FastifyInstance[] = [];
  // A generous direct-sync timeout: a busy machine must not turn a reachable Elasticsearch into a failed sync.
  const build = async (o: Partial<BuildAppOptions> = {}) => {
    const app = await buildApp({ db: catalogDb, sink: ctx.sink, adminToken: ADMIN_TOKEN, directSyncTimeoutMs: 10_000, ...overrides, ...o });
    apps.push(app);
    return app;
  };
  const app = await build();
  const call: CatalogContext["call"] = async (method, url, payload?, status?, target = app) => {
    const res = await target.inject({ method, url, ...(payload ? { payload } : {}), headers: url === "/reindex" ? admin : {} });
    const want = status ?? (method === "POST" ? 201 : method === "DELETE" ? 204 : 200);
    if (res.statusCode !== want) throw new Error(`${method} ${url}: expected ${want}, got ${res.statusCode}: ${res.body}`);
    return (res.body ? res.json() : undefined) as never;
  };
  return {
    ...ctx,
    catalogDb,
    app,
    build,
    call,
    async jobs() {
      const r = await sql<QueuedJob>`SELECT id::text, name, tag, priority, kwargs FROM tether.job ORDER BY id`.execute(ctx.db);
      return r.rows;
    },
    document: (id) => ctx.sink.readDocument(products.index, id),
    refresh: () => ctx.sink.refreshIndex(products.index),
    async close() {
      for (const a of apps) await a.close();
      await ctx.close();
    },
  };
}
