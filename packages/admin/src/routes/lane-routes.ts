import { Type } from "typebox";
import { pauseName, resumeName } from "@tether/core/internal";
import type { AdminApp, AdminContext } from "../admin-context.js";
import { authErrors, JobName } from "../schemas/common-schemas.js";
import { LaneSchema, readLanes } from "./overview-routes.js";

const LaneParams = Type.Object({ name: JobName });
const Reason = Type.Object({ reason: Type.String({ minLength: 1, maxLength: 500, description: "Why (shown beside the lane and kept in the audit log)" }) }, { additionalProperties: false });
const ResumeBody = Type.Object({ reason: Type.Optional(Type.String({ minLength: 1, maxLength: 500 })) }, { additionalProperties: false });
const LaneChange = Type.Object({ name: Type.String(), paused: Type.Boolean(), changed: Type.Boolean() });

export async function laneRoutes(app: AdminApp, ctx: AdminContext): Promise<void> {
  const { db } = ctx.options;

  app.get("/lanes", { schema: { summary: "Every lane with its counts and pause state", tags: ["lanes"], response: { 200: Type.Object({ items: Type.Array(LaneSchema) }), ...authErrors } } }, async () => ({
    items: (await readLanes(ctx)).lanes,
  }));

  app.post("/lanes/:name/pause", {
    config: { action: "lane.pause" },
    schema: { summary: "Pause a lane: drainers stop claiming its jobs from their next pass", tags: ["lanes"], params: LaneParams, body: Reason, response: { 200: LaneChange, ...authErrors } },
  }, async (request) => {
    await pauseName(db, request.params.name, request.body.reason);
    return { name: request.params.name, paused: true, changed: true };
  });

  app.post("/lanes/:name/resume", {
    config: { action: "lane.resume" },
    schema: { summary: "Resume a paused lane", tags: ["lanes"], params: LaneParams, body: Type.Optional(ResumeBody), response: { 200: LaneChange, ...authErrors } },
  }, async (request) => {
    const changed = await resumeName(db, request.params.name);
    return { name: request.params.name, paused: false, changed };
  });
}
