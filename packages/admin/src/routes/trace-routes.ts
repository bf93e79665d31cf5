import { Type } from "typebox";
import { ValidationError } from "@tether/core";
import { traceEntity } from "@tether/core/internal";
import type { AdminApp, AdminContext } from "../admin-context.js";
import { DeadJobSchema } from "./dead-job-routes.js";
import { QueuedJobSchema } from "./job-routes.js";
import { TraceVerdictSchema } from "../schemas/trace-verdict-schema.js";
import { AnyObject, authErrors, EntityId, Nullable, Timestamp } from "../schemas/common-schemas.js";
import { FanoutSchema, ViaSchema } from "../schemas/fanout-schemas.js";

const ReachedLink = { embed: Type.String(), table: Type.String(), column: Type.String(), value: Type.String() };

export const TraceSchema = Type.Object({
  collection: Type.String(), jobName: Type.String(), index: Type.String(), id: Type.String(),
  postgres: Type.Object({ exists: Type.Boolean(), version: Nullable(Type.Number()), deleted: Type.Boolean(), row: Nullable(AnyObject) }),
  downstream: Type.Object({
    reachable: Type.Boolean(), exists: Type.Boolean(), version: Nullable(Type.Number()), deleted: Type.Boolean(),
    contentMatches: Nullable(Type.Boolean({ description: "null when the sink cannot read documents or there is nothing to compare" })), error: Nullable(Type.String()),
  }),
  verdict: TraceVerdictSchema,
  explanation: Type.String(),
  repair: Nullable(Type.Object(
    { force: Type.Boolean({ description: "true for content drift at the row's own version: only a forced write rewrites it" }), note: Type.String() },
    { description: "The re-index (scope ids, this id) that repairs the verdict; null when there is nothing to repair" },
  )),
  pendingJobs: Type.Array(QueuedJobSchema),
  deadJobs: Type.Array(DeadJobSchema),
  events: Type.Array(Type.Object({
    id: Type.String(), at: Timestamp, kind: Type.String(), jobId: Nullable(Type.String()), tag: Nullable(Type.String()), priority: Nullable(Type.Integer()), detail: Nullable(Type.String()),
    via: Nullable(ViaSchema),
  })),
  fanout: Type.Object({
    links: Type.Array(Type.Object(ReachedLink), { description: "The rows of its fan-out embeds the document reads now" }),
    pendingChanges: Type.Array(Type.Object({
      ...ReachedLink, version: Type.Number(), expanded: Type.Number(), changedAt: Timestamp,
      fanout: Type.Union([Type.Literal("queued"), Type.Literal("parked"), Type.Literal("lost")], { description: "Where its fan-out job is: queued, parked, or lost (verify enqueues it again)" }),
    }), { description: "Changes of those rows not yet expanded (tether.embed_change)" }),
    fanouts: Type.Array(Type.Object({ ...FanoutSchema.properties, reached: Type.Boolean({ description: "Its expansion has bumped this document already" }) }), { description: "The fan-out jobs queued for those rows" }),
  }, { description: "Why the document will be re-synced from a table it reads" }),
});

export async function traceRoutes(app: AdminApp, ctx: AdminContext): Promise<void> {
  const { db, sink, collectionsByName } = ctx.options;
  const trace = (name: string, id: string) => {
    const collection = collectionsByName.get(name);
    if (!collection) throw new ValidationError("collection", `unknown collection "${name}"; known: ${[...collectionsByName.keys()].join(", ")}`);
    return traceEntity(db, sink, collection, id);
  };
  const summary = "Why is this entity (not) in the downstream? Both sides' versions, content match, pending jobs and history";
  app.get("/trace/:collection/:id", {
    schema: {
      summary, tags: ["trace"],
      params: Type.Object({ collection: Type.String({ minLength: 1, maxLength: 64 }), id: EntityId }),
      response: { 200: TraceSchema, ...authErrors },
    },
  }, async (request) => trace(request.params.collection, request.params.id));
  // Any id as a query parameter: a path segment cannot carry "." or ".." (URL parsers resolve
  // them as path steps even percent-encoded), and the console sends every id this way.
  app.get("/trace/:collection", {
    schema: {
      summary: `${summary} (the id as a query parameter: any id, "." and ".." included)`, tags: ["trace"],
      params: Type.Object({ collection: Type.String({ minLength: 1, maxLength: 64 }) }),
      querystring: Type.Object({ id: EntityId }, { additionalProperties: false }),
      response: { 200: TraceSchema, ...authErrors },
    },
  }, async (request) => trace(request.params.collection, request.query.id));
}
