import type { FastifyInstance } from "fastify";
import type { TypeBoxTypeProvider } from "@fastify/type-provider-typebox";
import type { Kysely } from "kysely";
import { NotFoundError, type Writer } from "@tether/core";
import type { CatalogDB } from "../catalog-db.js";
import { CategoryBody, IdParams } from "../catalog-schemas.js";
import { productChange, products } from "../product-collection.js";
import { bumpProductsOfCategory, findCategory, insertCategory, renameCategory } from "../product-store.js";

export interface CategoryRouteDeps {
  db: Kysely<CatalogDB>;
  writer: Writer;
}

/**
 * Categories are not synced themselves, but every product document embeds its category's name:
 * a rename bumps the version of the category's products and enqueues their jobs in the rename's
 * own transaction, so their documents follow (direct sync now, the drainer otherwise).
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
    const result = await writer.writeWithJobs(db, products, async (trx) => {
      const renamed = await renameCategory(trx, id, request.body.name);
      if (!renamed) throw new NotFoundError(`category ${id}`);
      return (await bumpProductsOfCategory(trx, id)).map(productChange);
    });
    return { id, name: request.body.name, resynced: result.jobIds.length, sync: result.sync };
  });
}
