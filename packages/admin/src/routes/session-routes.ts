import { Type } from "typebox";
import { insertAudit } from "@tether/core/internal";
import type { AdminApp, AdminContext } from "../admin-context.js";
import { CSRF_HEADER, matchToken, SESSION_COOKIE } from "../admin-auth.js";
import type { ConsoleSessions, TokenDigest } from "../console-sessions.js";
import { authErrors, ErrorBody } from "../schemas/common-schemas.js";

export const SessionSchema = Type.Object({
  name: Type.String(), role: Type.Union([Type.Literal("viewer"), Type.Literal("operator")]),
  csrfToken: Type.String({ description: `Echo it in the ${CSRF_HEADER} header of every mutating request` }),
});

export interface SessionDeps {
  tokens: readonly TokenDigest[];
  sessions: ConsoleSessions;
  /** Cookie path: where the plugin is mounted. */
  cookiePath: string;
}

/**
 * Browser login: a token once, then an HttpOnly SameSite=Strict cookie and a CSRF token. The
 * session lives in Postgres: any replica of the API serves it, and logging out ends it on all.
 */
export async function sessionRoutes(app: AdminApp, ctx: AdminContext, deps: SessionDeps): Promise<void> {
  const { db, secureCookie, sessionTtlMs } = ctx.options;

  app.post("/session", {
    config: { public: true },
    schema: {
      summary: "Log in with a token; sets the session cookie", tags: ["session"],
      body: Type.Object({ token: Type.String({ minLength: 1, maxLength: 1024 }) }, { additionalProperties: false }),
      response: { 200: SessionSchema, 400: ErrorBody, 401: ErrorBody, 503: ErrorBody },
    },
  }, async (request, reply) => {
    if (deps.tokens.length === 0) return reply.status(503).send({ error: "admin_disabled", message: "admin routes are disabled: no admin token is configured" });
    const who = matchToken(deps.tokens, request.body.token);
    if (!who) {
      await insertAudit(db, { actor: "unknown", role: "none", action: "session.login", params: {}, status: 401, result: { error: "unauthorized" } });
      return reply.status(401).send({ error: "unauthorized", message: "unknown token" });
    }
    const { cookie, session } = await deps.sessions.create(who);
    await insertAudit(db, { actor: who.name, role: who.role, action: "session.login", params: {}, status: 200, result: null });
    reply.setCookie(SESSION_COOKIE, cookie, {
      path: deps.cookiePath,
      httpOnly: true,
      sameSite: "strict",
      secure: secureCookie ?? request.protocol === "https",
      maxAge: Math.floor(sessionTtlMs / 1000),
    });
    return session;
  });

  app.get("/session", {
    schema: { summary: "Who this session is, and its CSRF token (for a reloaded page)", tags: ["session"], response: { 200: SessionSchema, ...authErrors } },
  }, async (request) => {
    const s = request.adminSession?.session;
    if (!s) return { name: request.adminIdentity!.name, role: request.adminIdentity!.role, csrfToken: "" };
    return s;
  });

  app.delete("/session", {
    config: { audit: "session.logout" },
    schema: { summary: "Log out: the session ends on every replica", tags: ["session"], response: { 204: Type.Null(), ...authErrors } },
  }, async (request, reply) => {
    if (request.adminSession) await deps.sessions.revoke(request.adminSession.cookie);
    reply.clearCookie(SESSION_COOKIE, { path: deps.cookiePath });
    return reply.status(204).send(null);
  });
}
