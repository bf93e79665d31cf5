import { Type } from "typebox";
import { enqueueReindex, ValidationError, type ReindexRequest } from "@tether/core";
import type { AdminApp, AdminContext } from "../admin-context.js";
import { authErrors } from "../schemas/common-schemas.js";

const ReindexBody = Type.Object(
  {
    collection: Type.Optional(Type.String({ minLength: 1, maxLength: 64, description: "Default: the only configured collection" })),
    scope: Type.String({ minLength: 1, maxLength: 64, description: "A scope of the collection (e.g. user, group, updated, created, ids) or all" }),
    value: Type.Optional(Type.String({ minLength: 1, maxLength: 1024, description: "For equals scopes (user, group)" })),
    from: Type.Optional(Type.String({ minLength: 1, maxLength: 64, description: "For range scopes: ISO-8601, inclusive" })),
    to: Type.Optional(Type.String({ minLength: 1, maxLength: 64, description: "For range scopes: ISO-8601, exclusive" })),
    // Strings or JSON integers; each one is checked by the collection's id rule (core), which
    // names the offending item ("ids.3").
    ids: Type.Optional(Type.Array(Type.Union([Type.String({ maxLength: 200 }), Type.Integer()]), { minItems: 1, maxItems: 100_000 })),
    force: Type.Optional(Type.Boolean({ description: "Rewrite even current documents (still verified)" })),
    priority: Type.Optional(Type.Integer({ minimum: 0, maximum: 1_000_000, description: "Default 100 for equals scopes, 1000 otherwise" })),
    tag: Type.Optional(Type.String({ minLength: 1, maxLength: 200, description: 'Must start with "reindex" (default)' })),
  },
  { additionalProperties: false },
);
const ReindexResult = Type.Object({ enqueued: Type.Integer(), priority: Type.Integer(), tag: Type.String() });

export async function reindexRoutes(app: AdminApp, ctx: AdminContext): Promise<void> {
  const { db, collections, collectionsByName, reindexBodyLimitBytes } = ctx.options;

  /**
   * One INSERT … SELECT of a sync job per matching entity. Scopes come from the collection
   * (for annotations: user, group, updated, created, ids) plus all; an equals scope that
   * matches nothing is a 404, never "0 jobs".
   */
  app.post("/reindex", {
    bodyLimit: reindexBodyLimitBytes,
    config: { action: "reindex" },
    schema: { summary: "Re-index by a scope, with force and priority; answers how many jobs it enqueued", tags: ["reindex"], body: ReindexBody, response: { 200: ReindexResult, ...authErrors } },
  }, async (request) => {
    const { collection: name, ids, ...rest } = request.body;
    const collection = name === undefined ? (collections.length === 1 ? collections[0] : undefined) : collectionsByName.get(name);
    if (!collection) {
      throw new ValidationError("collection", name === undefined ? `name one of: ${[...collectionsByName.keys()].join(", ")}` : `unknown collection "${name}"; known: ${[...collectionsByName.keys()].join(", ")}`);
    }
    const req: ReindexRequest = { ...rest, ...(ids !== undefined ? { ids: ids.map(String) } : {}) };
    return enqueueReindex(db, collection, req);
  });
}
