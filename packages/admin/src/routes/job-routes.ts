import { Type } from "typebox";
import { cancelQueuedJobs, listQueuedJobs, reprioritizeQueuedJobs } from "@tether/core/internal";
import type { AdminApp, AdminContext } from "../admin-context.js";
import { selection } from "../schemas/selection.js";
import { ViaSchema } from "../schemas/fanout-schemas.js";
import { authErrors, Cursor, EntityId, Ids, JobName, Limit, Nullable, page, Page, Tag, Timestamp } from "../schemas/common-schemas.js";

const JobState = Type.Union([Type.Literal("due"), Type.Literal("future"), Type.Literal("expired")]);
const JobFilter = {
  name: Type.Optional(JobName),
  tag: Type.Optional(Tag),
  priority: Type.Optional(Type.Integer({ minimum: 0, maximum: 1_000_000 })),
  entityId: Type.Optional(EntityId),
  state: Type.Optional(JobState),
};
const JobQuery = Type.Object({ ...JobFilter, cursor: Type.Optional(Cursor), limit: Type.Optional(Limit) }, { additionalProperties: false });

export const QueuedJobSchema = Type.Object({
  id: Type.String(), name: Type.String(), tag: Type.String(), priority: Type.Integer(), entityId: Nullable(Type.String()), force: Type.Boolean(), via: Nullable(ViaSchema),
  attempts: Type.Integer(), lastError: Nullable(Type.String()), enqueuedAt: Timestamp, scheduledAt: Timestamp, expiresAt: Timestamp, state: JobState,
});

/** Either `ids`, or `all: true` with a filter (an empty filter means every job). */
const Selection = { ids: Type.Optional(Ids), all: Type.Optional(Type.Literal(true)), filter: Type.Optional(Type.Object(JobFilter, { additionalProperties: false })) };
const CancelBody = Type.Object(Selection, { additionalProperties: false });
const ReprioritizeBody = Type.Object({ ...Selection, priority: Type.Integer({ minimum: 0, maximum: 1_000_000 }) }, { additionalProperties: false });


export async function jobRoutes(app: AdminApp, ctx: AdminContext): Promise<void> {
  const { db } = ctx.options;

  app.get("/jobs", {
    schema: { summary: "Queued jobs in enqueue order, filterable, cursor-paginated", tags: ["jobs"], querystring: JobQuery, response: { 200: Page(QueuedJobSchema), ...authErrors } },
  }, async (request) => {
    const { cursor, limit = 50, ...filter } = request.query;
    return page(await listQueuedJobs(db, { ...filter, ...(cursor ? { after: cursor } : {}), limit: limit + 1 }), limit);
  });

  app.post("/jobs/cancel", {
    config: { action: "jobs.cancel" },
    schema: {
      summary: "Cancel queued jobs (delete them; their entities are not synced unless written again or verified)",
      tags: ["jobs"], body: CancelBody, response: { 200: Type.Object({ cancelled: Type.Integer() }), ...authErrors },
    },
  }, async (request) => {
    const s = selection(request.body);
    return { cancelled: await cancelQueuedJobs(db, s.filter, s.ids) };
  });

  app.post("/jobs/reprioritize", {
    config: { action: "jobs.reprioritize" },
    schema: { summary: "Set the priority of queued jobs (lower runs first)", tags: ["jobs"], body: ReprioritizeBody, response: { 200: Type.Object({ updated: Type.Integer() }), ...authErrors } },
  }, async (request) => {
    const s = selection(request.body);
    return { updated: await reprioritizeQueuedJobs(db, s.filter, request.body.priority, s.ids) };
  });
}
