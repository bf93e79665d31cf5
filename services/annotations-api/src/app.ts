import Fastify, { type FastifyInstance } from "fastify";
import type { Kysely } from "kysely";
import type pino from "pino";
import { writerFromConfig, type AlertThresholds, type Collection, type Sink, type TetherOptions, type WriterOptions } from "@tether/core";
import { tetherAdmin, type AdminToken } from "@tether/admin";
import { annotations } from "@tether/annotations";
import { EngineSink } from "@tether/search-sink";
import { LIMITS } from "./annotation-schemas.js";
import { apiMetrics } from "./api-metrics.js";
import { errorContract, errorContractServerOptions } from "@tether/service-kit";
import { annotationRoutes } from "./routes/annotation-routes.js";
import { healthRoutes } from "./routes/health-routes.js";
import { searchRoutes } from "./routes/search-routes.js";
import { userRoutes } from "./routes/user-routes.js";

export interface BuildAppOptions {
  db: Kysely<any>;
  /** Target of the writer's direct sync after each commit. */
  sink: Sink;
  /**
   * Where GET /api/search and the health check go. Default: `sink`, when it is an Elasticsearch
   * or OpenSearch sink. (Tests point the writer at a dead node and keep search on a live one.)
   */
  searchSink?: EngineSink;
  /** Collections the admin console acts on (tether.config.ts's). Default: the annotations collection. */
  collections?: readonly Collection<any>[];
  /** Operator token of the admin console, named "admin" (TETHER_ADMIN_TOKEN). */
  adminToken?: string;
  /** Further named tokens with roles (TETHER_ADMIN_TOKENS). No token at all: admin routes answer 503. */
  adminTokens?: readonly AdminToken[];
  /** Default: no logging. */
  logger?: pino.Logger;
  /** The config's options (tether.config.ts): `writer` builds the writer, `alerts` the admin thresholds. Default {}. */
  options?: TetherOptions;
  /** Direct-sync timeout; overrides options.writer. Default 500 ms. */
  directSyncTimeoutMs?: number | undefined;
  /** Delay before the drainer may take a write's job; overrides options.writer. Default 60000 ms. */
  graceMs?: number | undefined;
  /** false: no direct sync after COMMIT (the drainer does every sync). Default true. */
  directSync?: boolean;
  /** The direct sync's circuit breaker (TETHER_BREAKER_FAILURES, TETHER_BREAKER_COOLDOWN_MS). Default 5 failures, 5000 ms. */
  breaker?: WriterOptions["breaker"];
  /** Largest request body. Default 65536 bytes (the admin re-index takes up to 8 MiB). */
  bodyLimitBytes?: number;
  /** Timeout of the Elasticsearch search query. Default 5000 ms. */
  searchTimeoutMs?: number;
  /** Overrides of the alert thresholds GET /admin/alerts evaluates. Default: options.alerts. */
  alertThresholds?: AlertThresholds;
  /** Passed to the admin plugin (tests wait on it). */
  onVerifyRunEnd?: (runId: string) => void;
}

/**
 * The reference annotation service, ready for `inject` or `listen` (it does not listen).
 *
 * @example
 * const app = await buildApp({ db, sink, adminToken: "s3cret" });
 * const res = await app.inject({ method: "POST", url: "/api/annotations", payload: { user: "acct:ann", uri: "https://example.com" } });
 */
export async function buildApp(opts: BuildAppOptions): Promise<FastifyInstance> {
  const app = Fastify({
    ...(opts.logger ? { loggerInstance: opts.logger } : { logger: false }),
    bodyLimit: opts.bodyLimitBytes ?? 65_536,
    // A user id in a path (/api/users/:userid) is any text an annotation's userid may be: up to
    // 256 characters, each up to four UTF-8 bytes, each byte percent-encoded as three characters.
    routerOptions: { maxParamLength: LIMITS.user * 4 * 3 },
    // Reject unknown fields (no silent stripping) and wrong types (no coercion into strings).
    ajv: { customOptions: { removeAdditional: false, coerceTypes: false, allErrors: false, allowUnionTypes: true } },
    ...errorContractServerOptions(),
  }) as unknown as FastifyInstance;
  // First: its onRoute hook must see every route (for 405 + Allow), its parser every body.
  await app.register(errorContract);
  const writer = writerFromConfig({ options: opts.options ?? {} }, {
    ...(opts.directSync === false ? {} : { sink: opts.sink }),
    ...(opts.logger ? { logger: opts.logger } : {}),
    ...(opts.directSyncTimeoutMs !== undefined ? { directSyncTimeoutMs: opts.directSyncTimeoutMs } : {}),
    ...(opts.graceMs !== undefined ? { graceMs: opts.graceMs } : {}),
    ...(opts.breaker !== undefined ? { breaker: opts.breaker } : {}),
  });
  const search = opts.searchSink ?? (opts.sink instanceof EngineSink ? opts.sink : undefined);
  const metrics = apiMetrics();

  app.addHook("onResponse", async (request, reply) => {
    const attrs = { method: request.method, route: request.routeOptions.url ?? "unmatched", status: reply.statusCode };
    metrics.requests.add(1, attrs);
    metrics.requestDuration.record(reply.elapsedTime / 1000, attrs);
  });

  await app.register(annotationRoutes, { db: opts.db, writer });
  await app.register(userRoutes, { db: opts.db, writer });
  await app.register(searchRoutes, { db: opts.db, search, timeoutMs: opts.searchTimeoutMs ?? 5_000 });
  // The admin console (JSON API + page) under /admin/, on the same Postgres and Elasticsearch.
  await app.register(tetherAdmin, {
    prefix: "/admin",
    db: opts.db,
    sink: search ?? opts.sink,
    collections: opts.collections ?? [annotations],
    tokens: [...(opts.adminToken ? [{ name: "admin", role: "operator" as const, token: opts.adminToken }] : []), ...(opts.adminTokens ?? [])],
    ...(opts.logger ? { logger: opts.logger } : {}),
    ...(opts.alertThresholds ?? opts.options?.alerts ? { alertThresholds: opts.alertThresholds ?? opts.options?.alerts } : {}),
    ...(opts.onVerifyRunEnd ? { onVerifyRunEnd: opts.onVerifyRunEnd } : {}),
  });
  metrics.observeBreaker(() => writer.breaker());
  await app.register(healthRoutes, { db: opts.db, search, metrics, breaker: () => writer.breaker() });
  await app.ready();
  return app;
}
