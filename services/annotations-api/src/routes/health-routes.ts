import type { FastifyInstance } from "fastify";
import type { Kysely } from "kysely";
import { pingDatabase } from "@tether/core";
import { describeError, type ElasticsearchSink } from "@tether/elasticsearch";
import type { ApiMetrics } from "../api-metrics.js";

export interface HealthRouteDeps {
  db: Kysely<any>;
  search: ElasticsearchSink | undefined;
  metrics: ApiMetrics;
}

const HEALTH_TIMEOUT_MS = 2_000;

function withTimeout<T>(p: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what} did not answer within ${ms} ms`)), ms);
  });
  return Promise.race([p, timeout]).finally(() => clearTimeout(timer));
}

/**
 * GET /healthz: 200 when Postgres answers (the API cannot write without it); Elasticsearch is
 * reported but not required, because writes still succeed and the drainer catches up.
 * GET /metrics: Prometheus text.
 */
export async function healthRoutes(app: FastifyInstance, { db, search, metrics }: HealthRouteDeps): Promise<void> {
  app.get("/healthz", async (_request, reply) => {
    const [pg, es] = await Promise.all([
      withTimeout(pingDatabase(db), HEALTH_TIMEOUT_MS, "postgres").then(
        () => ({ status: "ok" as const }),
        (err: unknown) => ({ status: "unreachable" as const, error: describeError(err) }),
      ),
      search
        ? // Cluster health rather than ping: HEAD / is not served by every distribution (integ-test-zip).
          search.client.cluster.health({}, { requestTimeout: HEALTH_TIMEOUT_MS, maxRetries: 0 }).then(
            (h) => ({ status: "ok" as const, cluster: h.status }),
            (err: unknown) => ({ status: "unreachable" as const, error: describeError(err) }),
          )
        : Promise.resolve({ status: "not_configured" as const }),
    ]);
    const ok = pg.status === "ok";
    return reply.status(ok ? 200 : 503).send({ status: ok ? "ok" : "unhealthy", postgres: pg, elasticsearch: es });
  });

  app.get("/metrics", async (_request, reply) => {
    const text = await metrics.scrape();
    return reply.type("text/plain; version=0.0.4; charset=utf-8").send(text);
  });
}
