import type { FastifyInstance } from "fastify";
import type { TypeBoxTypeProvider } from "@fastify/type-provider-typebox";
import type { Kysely } from "kysely";
import { ValidationError } from "@tether/core";
import { META_FIELD, type EngineSink } from "@tether/search-sink";
import { HttpError } from "@tether/service-kit";
import type { CatalogDB } from "../catalog-db.js";
import { present, SearchQuery } from "../catalog-schemas.js";
import { products } from "../product-collection.js";
import { findLiveProducts } from "../product-store.js";

export interface SearchRouteDeps {
  db: Kysely<CatalogDB>;
  /** Where searches go; undefined answers 503. */
  search: EngineSink | undefined;
  timeoutMs: number;
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

/**
 * GET /search: Elasticsearch finds the ids (full text over name, description and category
 * name; a category filter; a price range), Postgres supplies the current products. A product
 * deleted in Postgres never shows, even before its tombstone reaches the index.
 */
export async function searchRoutes(parent: FastifyInstance, { db, search, timeoutMs }: SearchRouteDeps): Promise<void> {
  const app = parent.withTypeProvider<TypeBoxTypeProvider>();

  app.get("/search", { schema: { querystring: SearchQuery } }, async (request) => {
    const { q, categoryId, minPriceCents, maxPriceCents } = request.query;
    const limit = request.query.limit === undefined ? 20 : Number(request.query.limit);
    if (limit < 1 || limit > 200) throw new ValidationError("limit", "must be an integer in 1..200");
    if (!search) throw new HttpError("search_unavailable", "search is not configured");
    const filter: unknown[] = [{ term: { [`${META_FIELD}.deleted`]: false } }];
    if (categoryId !== undefined) filter.push({ term: { category_id: categoryId.toLowerCase() } });
    if (minPriceCents !== undefined || maxPriceCents !== undefined) {
      filter.push({ range: { price_cents: { ...(minPriceCents !== undefined ? { gte: Number(minPriceCents) } : {}), ...(maxPriceCents !== undefined ? { lte: Number(maxPriceCents) } : {}) } } });
    }
    const must = q !== undefined ? [{ multi_match: { query: q, fields: ["name^3", "category_name^2", "description", "sku"] } }] : [];
    let res;
    try {
      res = await search.searchIds(
        products.index,
        { _source: false, size: limit, track_total_hits: true, query: { bool: { filter, must } }, sort: ["_score", { updated_at: { order: "desc" } }, { sku: "asc" }] },
        { timeoutMs },
      );
    } catch (err) {
      request.log.warn({ err: err instanceof Error ? `${err.name}: ${err.message}` : String(err) }, "search failed");
      throw new HttpError("search_unavailable", "search is unavailable; retry later", { cause: err });
    }
    const ids = res.ids.filter((id) => UUID.test(id));
    const byId = new Map((await findLiveProducts(db, ids)).map((p) => [p.id, p]));
    const rows = ids.flatMap((id) => (byId.has(id) ? [present(byId.get(id)!)] : []));
    return { total: Math.max(0, res.total - (res.ids.length - rows.length)), rows };
  });
}
