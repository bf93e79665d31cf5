import type { FastifyInstance } from "fastify";
import type { TypeBoxTypeProvider } from "@fastify/type-provider-typebox";
import type { Kysely } from "kysely";
import { NotFoundError, ValidationError, type Writer } from "@tether/core";
import { HttpError } from "@tether/service-kit";
import type { CatalogDB, ProductDocumentRow } from "../catalog-db.js";
import { CreateProductBody, IdParams, PatchProductBody, PriceChangeBody, present, StockBody } from "../catalog-schemas.js";
import { productChange as change, products } from "../product-collection.js";
import { changePrices, findCategory, findLiveProducts, insertProduct, insertStock } from "../product-store.js";

export interface ProductRouteDeps {
  db: Kysely<CatalogDB>;
  writer: Writer;
}

const isUniqueViolation = (err: unknown) => (err as { code?: unknown } | null)?.code === "23505";

async function requireCategory(db: Kysely<CatalogDB>, categoryId: string): Promise<void> {
  if (!(await findCategory(db, categoryId))) throw new ValidationError("categoryId", `no category ${categoryId}`);
}

/**
 * Products: every write goes through the tether writer (rows and jobs commit together, then
 * one best-effort direct sync); nothing here talks to Elasticsearch.
 */
export async function productRoutes(parent: FastifyInstance, { db, writer }: ProductRouteDeps): Promise<void> {
  const app = parent.withTypeProvider<TypeBoxTypeProvider>();

  app.post("/products", { schema: { body: CreateProductBody } }, async (request, reply) => {
    const b = request.body;
    const categoryId = b.categoryId.toLowerCase();
    await requireCategory(db, categoryId);
    try {
      // The product and its stock row in one transaction with the product's job.
      const { row } = await writer.writeWithJobs(db, products, async (trx) => {
        const p = await insertProduct(trx, { sku: b.sku, name: b.name, description: b.description ?? "", price_cents: b.priceCents, category_id: categoryId });
        await insertStock(trx, p.id, b.stock ?? 0);
        return [change(p)];
      });
      return reply.status(201).header("location", `/products/${row!.id}`).send(present(row!));
    } catch (err) {
      if (isUniqueViolation(err)) throw new HttpError("conflict", `a product with sku ${b.sku} exists`, { field: "sku", cause: err });
      throw err;
    }
  });

  app.get("/products/:id", { schema: { params: IdParams } }, async (request) => {
    const [p] = await findLiveProducts(db, [request.params.id.toLowerCase()]);
    if (!p) throw new NotFoundError(`product ${request.params.id}`);
    return present(p);
  });

  app.patch("/products/:id", { schema: { params: IdParams, body: PatchProductBody } }, async (request) => {
    const b = request.body;
    if (b.categoryId !== undefined) await requireCategory(db, b.categoryId.toLowerCase());
    const { row } = await writer.updateWithJob(db, products, request.params.id.toLowerCase(), {
      ...(b.name !== undefined ? { name: b.name } : {}),
      ...(b.description !== undefined ? { description: b.description } : {}),
      ...(b.priceCents !== undefined ? { price_cents: b.priceCents } : {}),
      ...(b.categoryId !== undefined ? { category_id: b.categoryId.toLowerCase() } : {}),
      updated_at: new Date(),
    });
    return present(row!);
  });

  // The stock through the collection's `stock` embed (direct: the stock row names its product):
  // the product's version is bumped and its job enqueued in the stock's own transaction, and the
  // writer syncs its document after COMMIT. An update, or an insert for a product without one.
  app.put("/products/:id/stock", { schema: { params: IdParams, body: StockBody } }, async (request) => {
    const id = request.params.id.toLowerCase();
    if ((await findLiveProducts(db, [id])).length === 0) throw new NotFoundError(`product ${id}`);
    const { quantity } = request.body;
    const update = () => writer.updateWithJob(db, products.embeds.stock, id, { quantity, updated_at: new Date() });
    let result;
    try {
      result = await update();
    } catch (err) {
      if (!(err instanceof NotFoundError)) throw err;
      try {
        result = await writer.createWithJob(db, products.embeds.stock, { product_id: id, quantity });
      } catch (e) {
        // Another request inserted it meanwhile.
        if (!isUniqueViolation(e)) throw e;
        result = await update();
      }
    }
    // The bumped product, as its document was built (none when it was deleted meanwhile). An
    // embed write's changes are the collection's rows, typed as plain records.
    const [bumped] = result.changes;
    if (!bumped?.row) throw new NotFoundError(`product ${id}`);
    return present(bumped.row as unknown as ProductDocumentRow);
  });

  app.delete("/products/:id", { schema: { params: IdParams } }, async (request, reply) => {
    await writer.deleteWithJob(db, products, request.params.id.toLowerCase());
    return reply.status(204).send();
  });

  // Many rows, one statement, one transaction with all their jobs, one bulk direct sync.
  app.post("/products/price-change", { schema: { body: PriceChangeBody } }, async (request) => {
    const { categoryId, ids, percent } = request.body;
    if ((categoryId === undefined) === (ids === undefined)) throw new ValidationError("categoryId", "give either categoryId or ids");
    const target = categoryId !== undefined ? { categoryId: categoryId.toLowerCase() } : { ids: ids!.map((i) => i.toLowerCase()) };
    const result = await writer.writeWithJobs(db, products, async (trx) => (await changePrices(trx, target, percent)).map(change));
    return { changed: result.changes.length, jobs: result.jobIds.length, sync: result.sync };
  });
}
