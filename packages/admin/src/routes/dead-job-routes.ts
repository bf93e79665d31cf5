import { Type } from "typebox";
import { discardDeadJobs, listDeadJobsPage, retryDeadJobs } from "@tether/core/internal";
import type { AdminApp, AdminContext } from "../admin-context.js";
import { selection } from "../schemas/selection.js";
import { authErrors, Cursor, Ids, JobName, Limit, Nullable, page, Page, Tag, Timestamp } from "../schemas/common-schemas.js";

const Reason = Type.Union([Type.Literal("parked"), Type.Literal("expired")]);
const DeadFilter = { reason: Type.Optional(Reason), name: Type.Optional(JobName) };
const DeadQuery = Type.Object({ ...DeadFilter, tag: Type.Optional(Tag), cursor: Type.Optional(Cursor), limit: Type.Optional(Limit) }, { additionalProperties: false });

export const DeadJobSchema = Type.Object({
  id: Type.String({ description: "Dead-letter row id (what retry and discard take)" }),
  jobId: Type.String(), name: Type.String(), tag: Type.String(), priority: Type.Integer(), entityId: Nullable(Type.String()), kwargs: Type.Unknown(),
  attempts: Type.Integer(), lastError: Nullable(Type.String()), reason: Reason, enqueuedAt: Timestamp, deadAt: Timestamp,
});

const Selection = Type.Object(
  { ids: Type.Optional(Ids), all: Type.Optional(Type.Literal(true)), filter: Type.Optional(Type.Object(DeadFilter, { additionalProperties: false })) },
  { additionalProperties: false, description: "Either ids, or all: true with an optional filter (reason, name)" },
);


export async function deadJobRoutes(app: AdminApp, ctx: AdminContext): Promise<void> {
  const { db } = ctx.options;

  app.get("/dead-jobs", {
    schema: { summary: "Parked and expired jobs, newest first, with reason and last error", tags: ["dead jobs"], querystring: DeadQuery, response: { 200: Page(DeadJobSchema), ...authErrors } },
  }, async (request) => {
    const { cursor, limit = 50, ...filter } = request.query;
    return page(await listDeadJobsPage(db, { ...filter, ...(cursor ? { before: cursor } : {}), limit: limit + 1 }), limit);
  });

  app.post("/dead-jobs/retry", {
    config: { action: "dead_jobs.retry" },
    schema: { summary: "Move dead jobs back to the queue, due now", tags: ["dead jobs"], body: Selection, response: { 200: Type.Object({ retried: Type.Integer() }), ...authErrors } },
  }, async (request) => {
    const s = selection(request.body);
    return retryDeadJobs(db, { ...s.filter, ...(s.ids ? { ids: s.ids } : { all: true }) });
  });

  app.post("/dead-jobs/discard", {
    config: { action: "dead_jobs.discard" },
    schema: { summary: "Delete dead jobs for good (verify finds their entities if they still differ)", tags: ["dead jobs"], body: Selection, response: { 200: Type.Object({ discarded: Type.Integer() }), ...authErrors } },
  }, async (request) => {
    const s = selection(request.body);
    return { discarded: await discardDeadJobs(db, s.filter, s.ids) };
  });
}
