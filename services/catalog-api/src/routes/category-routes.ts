import type { FastifyInstance } from "fastify";
import type { TypeBoxTypeProvider } from "@fastify/type-provider-typebox";
import type { Kysely } from "kysely";
import { NotFoundError, type Writer } from "@tether/core";
import type { CatalogDB } from "../catalog-db.js";
import { CategoryBody, IdParams } from "../catalog-schemas.js";
import { products } from "../product-collection.js";
import { findCategory, insertCategory } from "../product-store.js";

export interface CategoryRouteDeps {
  db: Kysely<CatalogDB>;
  writer: Writer;
}

/**
 * Categories are not synced themselves, but every product document embeds its category's name
 * (the collection's `category` embed). A rename goes through the writer's verb on that embed:
 * the rename and ONE fan-out job commit together, whatever the number of products in the
 * category, and the drainer re-syncs them a chunk at a time.
 */
export async function categoryRoutes(parent: FastifyInstance, { db, writer }: CategoryRouteDeps): Promise<void> {
  const app = parent.withTypeProvider<TypeBoxTypeProvider>();

  app.post("/categories", { schema: { body: CategoryBody } }, async (request, reply) => {
    const c = await insertCategory(db, request.body.name);
    return reply.status(201).header("location", `/categories/${c.id}`).send({ id: c.id, name: c.name });
  });

  app.get("/categories/:id", { schema: { params: IdParams } }, async (request) => {
    const c = await findCategory(db, request.params.id.toLowerCase());
    if (!c) throw new NotFoundError(`category ${request.params.id}`);
    return { id: c.id, name: c.name };
  });

  app.patch("/categories/:id", { schema: { params: IdParams, body: CategoryBody } }, async (request) => {
    const id = request.params.id.toLowerCase();
    try {
      const result = await writer.updateWithJob(db, products.embeds.category, id, { name: request.body.name, updated_at: new Date() });
      // `fanouts`: the fan-out jobs the rename enqueued (1); the drainer re-syncs the products.
      return { id, name: result.row!.name, fanouts: result.fanouts };
    } catch (err) {
      if (err instanceof NotFoundError) throw new NotFoundError(`category ${id}`);
      throw err;
    }
  });
}
