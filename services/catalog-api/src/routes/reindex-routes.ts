import { timingSafeEqual } from "node:crypto";
import type { FastifyInstance } from "fastify";
import type { TypeBoxTypeProvider } from "@fastify/type-provider-typebox";
import type { Kysely } from "kysely";
import { enqueueReindex } from "@tether/core";
import { HttpError } from "@tether/service-kit";
import type { CatalogDB } from "../catalog-db.js";
import { ReindexBody } from "../catalog-schemas.js";
import { products } from "../product-collection.js";

export interface ReindexRouteDeps {
  db: Kysely<CatalogDB>;
  /** Bearer token of POST /reindex; without one the route answers 503. */
  adminToken: string | undefined;
}

function authorize(header: string | undefined, token: string | undefined): void {
  if (!token) throw new HttpError("admin_disabled", "re-index is disabled: set CATALOG_ADMIN_TOKEN");
  const given = Buffer.from(header?.startsWith("Bearer ") ? header.slice(7) : "");
  const want = Buffer.from(token);
  if (given.length !== want.length || !timingSafeEqual(given, want)) {
    throw new HttpError("unauthorized", "a valid bearer token is required", { headers: { "www-authenticate": 'Bearer realm="catalog"' } });
  }
}

/**
 * POST /reindex: one job per product in a scope of the collection (`category` with a category
 * uuid as `value`, `updated` with `from`/`to`, `ids`, or `all`), enqueued by one INSERT … SELECT.
 */
export async function reindexRoutes(parent: FastifyInstance, { db, adminToken }: ReindexRouteDeps): Promise<void> {
  const app = parent.withTypeProvider<TypeBoxTypeProvider>();
  app.post("/reindex", { schema: { body: ReindexBody } }, async (request, reply) => {
    authorize(request.headers.authorization, adminToken);
    const b = request.body;
    const value = b.scope === "category" && b.value !== undefined ? b.value.toLowerCase() : b.value;
    if (b.scope === "category" && value !== undefined && !/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/.test(value)) {
      throw new HttpError("validation", "the category scope takes a category uuid", { field: "value" });
    }
    const result = await enqueueReindex(db, products, { ...b, ...(value !== undefined ? { value } : {}) });
    return reply.status(202).send(result);
  });
}
