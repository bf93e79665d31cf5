import type { FastifyInstance } from "fastify";
import type { Kysely } from "kysely";
import type { EngineSink } from "@tether/search-sink";
import { pingPostgres } from "../health-store.js";

export interface HealthRouteDeps {
  db: Kysely<any>;
  search: EngineSink | undefined;
}

/** GET /healthz: 200 while Postgres answers (writes need it); Elasticsearch is reported, not required. */
export async function healthRoutes(app: FastifyInstance, { db, search }: HealthRouteDeps): Promise<void> {
  app.get("/healthz", async (request, reply) => {
    const down = (dependency: string) => (err: unknown) => {
      request.log.warn({ dependency, err: String(err) }, "health check: dependency down");
      return "down" as const;
    };
    const [postgres, elasticsearch] = await Promise.all([
      pingPostgres(db).then(() => "ok" as const, down("postgres")),
      search ? search.health({ timeoutMs: 2_000 }).then(() => "ok" as const, down("elasticsearch")) : Promise.resolve("not_configured" as const),
    ]);
    return reply.status(postgres === "ok" ? 200 : 503).send({ status: postgres === "ok" ? "ok" : "down", postgres, elasticsearch });
  });
}
