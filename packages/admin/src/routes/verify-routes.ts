import { Type } from "typebox";
import { getVerifyRun, listVerifyRuns, NotFoundError, ValidationError } from "@tether/core/internal";
import type { AdminApp, AdminContext } from "../admin-context.js";
import { authErrors, Cursor, Id, Limit, Nullable, page, Page, Timestamp } from "../schemas/common-schemas.js";

export const VerifyRunSchema = Type.Object({
  id: Type.String(), collection: Type.String(),
  status: Type.Union([Type.Literal("running"), Type.Literal("done"), Type.Literal("failed")]),
  startedBy: Type.String(), startedAt: Timestamp, updatedAt: Timestamp, finishedAt: Nullable(Timestamp),
  bucketsTotal: Type.Integer(), bucketsDone: Type.Integer(), bucketsCompared: Type.Integer(), bucketsDiffering: Type.Integer(),
  drifted: Type.Record(Type.String(), Type.Integer(), { description: "By kind: missing, stale, ghost, deleted_live" }),
  driftedTotal: Type.Integer(), enqueued: Type.Integer({ description: "Repair jobs enqueued" }), error: Nullable(Type.String()),
});
export const RunDetail = Type.Object({ run: VerifyRunSchema, results: Type.Array(Type.Object({ kind: Type.String(), entityId: Type.String() })) });

export async function verifyRoutes(app: AdminApp, ctx: AdminContext): Promise<void> {
  const { db, collectionsByName } = ctx.options;

  app.get("/verify-runs", {
    schema: {
      summary: "Verify runs, newest first", tags: ["verify"],
      querystring: Type.Object({ collection: Type.Optional(Type.String({ minLength: 1, maxLength: 64 })), cursor: Type.Optional(Cursor), limit: Type.Optional(Limit) }, { additionalProperties: false }),
      response: { 200: Page(VerifyRunSchema), ...authErrors },
    },
  }, async (request) => {
    const { cursor, limit = 50, collection } = request.query;
    return page(await listVerifyRuns(db, { ...(collection ? { collection } : {}), ...(cursor ? { before: cursor } : {}), limit: limit + 1 }), limit);
  });

  app.post("/verify-runs", {
    config: { action: "verify.start" },
    schema: {
      summary: "Start a full anti-entropy comparison of a collection; repairs are enqueued for what drifted", tags: ["verify"],
      body: Type.Object({ collection: Type.String({ minLength: 1, maxLength: 64 }) }, { additionalProperties: false }),
      response: { 202: VerifyRunSchema, ...authErrors },
    },
  }, async (request, reply) => {
    const collection = collectionsByName.get(request.body.collection);
    if (!collection) throw new ValidationError("collection", `unknown collection "${request.body.collection}"; known: ${[...collectionsByName.keys()].join(", ")}`);
    const run = await ctx.verifyRunner.start(collection, request.adminIdentity!.name);
    return reply.status(202).send(run);
  });

  app.get("/verify-runs/:id", {
    schema: { summary: "One run with its progress and the drifted entities it found", tags: ["verify"], params: Type.Object({ id: Id }), response: { 200: RunDetail, ...authErrors } },
  }, async (request) => {
    const r = await getVerifyRun(db, request.params.id);
    if (!r) throw new NotFoundError(`verify run ${request.params.id}`);
    return r;
  });
}
