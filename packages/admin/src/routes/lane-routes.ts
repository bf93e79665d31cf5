import { Type } from "typebox";
import { pauseName, resolveLaneName, resumeName, UnknownLaneError, type Collection } from "@tether/core/internal";
import { HttpError } from "@tether/service-kit";
import type { AdminApp, AdminContext } from "../admin-context.js";
import { authErrors } from "../schemas/common-schemas.js";
import { LaneSchema, readLanes } from "./overview-routes.js";

const LaneParams = Type.Object({ name: Type.String({ minLength: 1, maxLength: 200, description: "A job name (sync_annotation) or a collection name (annotation), as `tether pause` takes: a collection name resolves to its lane (the collection's job name, its sync lane), which the answer's `name` gives" }) });
const Force = Type.Boolean({ description: "Accept a job name no configured collection handles (a lane paused before its first job). Default false: such a name answers 404 not_found." });
const Reason = Type.Object({
  reason: Type.String({ minLength: 1, maxLength: 500, description: "Why (shown beside the lane and kept in the audit log)" }),
  force: Type.Optional(Force),
}, { additionalProperties: false });
const ResumeBody = Type.Object({ reason: Type.Optional(Type.String({ minLength: 1, maxLength: 500 })), force: Type.Optional(Force) }, { additionalProperties: false });
const LaneChange = Type.Object({ name: Type.String({ description: "The lane's job name: for a collection name sent, the lane it resolved to (annotation: sync_annotation)" }), paused: Type.Boolean(), changed: Type.Boolean() });

/** The lane's job name as `tether pause` resolves it; 404 not_found naming an unknown one. */
function laneOf(collections: readonly Collection<any>[], raw: string, force: boolean): string {
  try {
    return resolveLaneName(collections, raw, { force });
  } catch (err) {
    if (err instanceof UnknownLaneError) throw new HttpError("not_found", `${err.message} (send "force": true for a lane no configured collection handles)`, { cause: err });
    throw err;
  }
}

export async function laneRoutes(app: AdminApp, ctx: AdminContext): Promise<void> {
  const { db, collections } = ctx.options;

  app.get("/lanes", { schema: { summary: "Every lane (each configured one, even empty, and any job name in the queue) with its counts and pause state", tags: ["lanes"], response: { 200: Type.Object({ items: Type.Array(LaneSchema) }), ...authErrors } } }, async () => ({
    items: (await readLanes(ctx)).lanes,
  }));

  app.post("/lanes/:name/pause", {
    config: { action: "lane.pause" },
    schema: { summary: "Pause a lane (a job name, or a collection name: its lane): drainers stop claiming its jobs from their next pass", tags: ["lanes"], params: LaneParams, body: Reason, response: { 200: LaneChange, ...authErrors } },
  }, async (request) => {
    const name = laneOf(collections, request.params.name, request.body.force === true);
    await pauseName(db, name, request.body.reason);
    return { name, paused: true, changed: true };
  });

  app.post("/lanes/:name/resume", {
    config: { action: "lane.resume" },
    schema: { summary: "Resume a paused lane (a job name, or a collection name: its lane)", tags: ["lanes"], params: LaneParams, body: Type.Optional(ResumeBody), response: { 200: LaneChange, ...authErrors } },
  }, async (request) => {
    const name = laneOf(collections, request.params.name, request.body?.force === true);
    const changed = await resumeName(db, name);
    return { name, paused: false, changed };
  });
}
