import Fastify, { type FastifyInstance } from "fastify";
import type { Kysely } from "kysely";
import type pino from "pino";
import { writerFromConfig, type Sink, type TetherOptions } from "@tether/core";
import { EngineSink } from "@tether/search-sink";
import { errorContract, errorContractServerOptions } from "@tether/service-kit";
import type { CatalogDB } from "./catalog-db.js";
import { categoryRoutes } from "./routes/category-routes.js";
import { healthRoutes } from "./routes/health-routes.js";
import { productRoutes } from "./routes/product-routes.js";
import { reindexRoutes } from "./routes/reindex-routes.js";
import { searchRoutes } from "./routes/search-routes.js";

export interface BuildAppOptions {
  db: Kysely<CatalogDB>;
  /** Target of the writer's direct sync after each commit (the config's sink). */
  sink: Sink;
  /** Where GET /search goes. Default: `sink`, when it is an Elasticsearch or OpenSearch sink. */
  search?: EngineSink;
  /** Bearer token of POST /reindex; without one it answers 503. */
  adminToken?: string;
  logger?: pino.Logger;
  /** The config's options (catalog.config.ts): `writer` builds the writer. Default {}. */
  options?: TetherOptions;
  /** Direct-sync timeout; overrides options.writer. Default 500 ms. */
  directSyncTimeoutMs?: number | undefined;
  /** Delay before the drainer may take a write's job; overrides options.writer. Default 60000 ms. */
  graceMs?: number | undefined;
  /** Timeout of a search. Default 5000 ms. */
  searchTimeoutMs?: number;
}

/**
 * The catalog service, ready for `inject` or `listen` (it does not listen). Built on the public
 * packages only: `@tether/core`, `@tether/elasticsearch` (or `@tether/opensearch`), `@tether/search-sink`, `@tether/service-kit`.
 *
 * @example
 * const app = await buildApp({ db, sink, adminToken: "s3cret" });
 * const res = await app.inject({ method: "POST", url: "/categories", payload: { name: "Tea" } });
 */
export async function buildApp(opts: BuildAppOptions): Promise<FastifyInstance> {
  const app = Fastify({
    ...(opts.logger ? { loggerInstance: opts.logger } : { logger: false }),
    bodyLimit: 1_048_576,
    ajv: { customOptions: { removeAdditional: false, coerceTypes: false, allErrors: false } },
    ...errorContractServerOptions(),
  }) as unknown as FastifyInstance;
  await app.register(errorContract);
  const writer = writerFromConfig({ options: opts.options ?? {} }, {
    sink: opts.sink,
    ...(opts.logger ? { logger: opts.logger } : {}),
    ...(opts.directSyncTimeoutMs !== undefined ? { directSyncTimeoutMs: opts.directSyncTimeoutMs } : {}),
    ...(opts.graceMs !== undefined ? { graceMs: opts.graceMs } : {}),
  });
  const search = opts.search ?? (opts.sink instanceof EngineSink ? opts.sink : undefined);
  await app.register(categoryRoutes, { db: opts.db, writer });
  await app.register(productRoutes, { db: opts.db, writer });
  await app.register(searchRoutes, { db: opts.db, search, timeoutMs: opts.searchTimeoutMs ?? 5_000 });
  await app.register(reindexRoutes, { db: opts.db, adminToken: opts.adminToken });
  await app.register(healthRoutes, { db: opts.db, search });
  await app.ready();
  return app;
}
