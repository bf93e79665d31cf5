import type { FastifyInstance } from "fastify";
import type { Kysely } from "kysely";
import type { BreakerSnapshot } from "@tether/core";
import { pingDatabase } from "@tether/core/internal";
import type { EngineSink } from "@tether/search-sink";
import type { ApiMetrics } from "../api-metrics.js";

export interface HealthRouteDeps {
  db: Kysely<any>;
  search: EngineSink | undefined;
  metrics: ApiMetrics;
  /** The writer's direct sync breaker. */
  breaker?: () => BreakerSnapshot | undefined;
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
 * reported but not required, because writes still succeed and the drainer catches up. The
 * route needs no token, so it says only `ok` / `down` (or `not_configured`) per dependency:
 * addresses and driver messages go to the log. `directSync.breaker` is the direct sync's
 * circuit breaker: `closed`, `open` (writes leave their sync to the drainer) or `half_open`.
 * GET /metrics: Prometheus text.
 */
export async function healthRoutes(app: FastifyInstance, { db, search, metrics, breaker }: HealthRouteDeps): Promise<void> {
  app.get("/healthz", async (request, reply) => {
    const down = (dependency: string) => (err: unknown) => {
      request.log.warn({ dependency, err: err instanceof Error ? `${err.name}: ${err.message}` : String(err) }, "health check: dependency down");
      return "down" as const;
    };
    const [postgres, elasticsearch] = await Promise.all([
      withTimeout(pingDatabase(db), HEALTH_TIMEOUT_MS, "postgres").then(() => "ok" as const, down("postgres")),
      search
        ? // Cluster health rather than ping: HEAD / is not served by every distribution (integ-test-zip).
          search.health({ timeoutMs: HEALTH_TIMEOUT_MS }).then(() => "ok" as const, down("elasticsearch"))
        : Promise.resolve("not_configured" as const),
    ]);
    const ok = postgres === "ok";
    const b = breaker?.();
    // The breaker open means writes skip the direct sync (the drainer catches up): reported, not a failure.
    const directSync = b ? { breaker: b.state, consecutiveFailures: b.consecutiveFailures } : { breaker: "not_configured" };
    return reply.status(ok ? 200 : 503).send({ status: ok ? "ok" : "down", postgres, elasticsearch, directSync });
  });

  app.get("/metrics", async (_request, reply) => {
    const text = await metrics.scrape();
    return reply.type("text/plain; version=0.0.4; charset=utf-8").send(text);
  });
}
