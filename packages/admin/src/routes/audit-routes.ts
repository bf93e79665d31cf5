import { Type } from "typebox";
import { listAudit } from "@tether/core/internal";
import type { AdminApp, AdminContext } from "../admin-context.js";
import { authErrors, Cursor, Limit, page, Page, Timestamp } from "../schemas/common-schemas.js";

const Outcome = Type.Union([Type.Literal("ok"), Type.Literal("refused"), Type.Literal("failed")], {
  description: "ok: status below 400; refused: 401 or 403 (no or a wrong credential, an expired or revoked session, a missing CSRF token, a viewer's action); failed: any other error",
});

export const AuditSchema = Type.Object({
  id: Type.String(), at: Timestamp, actor: Type.String({ description: "The token's name (unknown when none matched)" }), role: Type.String(), action: Type.String(),
  params: Type.Record(Type.String(), Type.Unknown()), status: Type.Integer({ description: "HTTP status of the answer" }), outcome: Outcome, result: Type.Unknown(),
});

export async function auditRoutes(app: AdminApp, ctx: AdminContext): Promise<void> {
  app.get("/audit", {
    schema: {
      summary: "Every admin action and every refusal, newest first", tags: ["audit"],
      querystring: Type.Object({
        actor: Type.Optional(Type.String({ minLength: 1, maxLength: 64 })),
        action: Type.Optional(Type.String({ minLength: 1, maxLength: 64 })),
        outcome: Type.Optional(Outcome),
        cursor: Type.Optional(Cursor),
        limit: Type.Optional(Limit),
      }, { additionalProperties: false }),
      response: { 200: Page(AuditSchema), ...authErrors },
    },
  }, async (request) => {
    const { cursor, limit = 50, actor, action, outcome } = request.query;
    return page(await listAudit(ctx.options.db, { ...(actor ? { actor } : {}), ...(action ? { action } : {}), ...(outcome ? { outcome } : {}), ...(cursor ? { before: cursor } : {}), limit: limit + 1 }), limit);
  });
}
