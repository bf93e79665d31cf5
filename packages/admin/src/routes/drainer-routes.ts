import { Type } from "typebox";
import { listHeartbeats } from "@tether/core/internal";
import type { AdminApp, AdminContext } from "../admin-context.js";
import { AnyObject, authErrors, Nullable, Timestamp } from "../schemas/common-schemas.js";

export const DrainerSchema = Type.Object({
  id: Type.String(), host: Type.String(), pid: Type.Integer(), version: Type.String(), startedAt: Timestamp, seenAt: Timestamp,
  passes: Type.Integer(), failedPasses: Type.Integer(), lastPassAt: Nullable(Timestamp), lastPass: Nullable(AnyObject), stoppedAt: Nullable(Timestamp),
  ageSeconds: Type.Number({ description: "Seconds since its last heartbeat" }),
  state: Type.Union([Type.Literal("alive"), Type.Literal("stopped"), Type.Literal("gone")], { description: "gone: no heartbeat for longer than the stale limit" }),
});

export async function drainerRoutes(app: AdminApp, ctx: AdminContext): Promise<void> {
  const { db, drainerStaleMs } = ctx.options;
  app.get("/drainers", {
    schema: {
      summary: "Every drainer that reported itself in the last day: alive, stopped or gone", tags: ["drainers"],
      querystring: Type.Object({ withinHours: Type.Optional(Type.Integer({ minimum: 1, maximum: 168, default: 24 })) }, { additionalProperties: false }),
      response: { 200: Type.Object({ items: Type.Array(DrainerSchema), staleAfterSeconds: Type.Number() }), ...authErrors },
    },
  }, async (request) => {
    const rows = await listHeartbeats(db, { withinSeconds: (request.query.withinHours ?? 24) * 3600, limit: 500 });
    return {
      staleAfterSeconds: drainerStaleMs / 1000,
      items: rows.map((r) => ({ ...r, state: r.stoppedAt ? ("stopped" as const) : r.ageSeconds * 1000 > drainerStaleMs ? ("gone" as const) : ("alive" as const) })),
    };
  });
}
