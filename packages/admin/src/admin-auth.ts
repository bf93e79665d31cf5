import { createHash, timingSafeEqual } from "node:crypto";
import type {} from "@fastify/cookie";
import type { FastifyReply, FastifyRequest } from "fastify";
import { sendErrorBody } from "@tether/service-kit";
import type { AdminRole, AdminToken } from "./admin-options.js";
import type { SessionRegistry } from "./session-registry.js";

export const SESSION_COOKIE = "tether_admin_session";
export const CSRF_HEADER = "x-csrf-token";

/** Who a request acts as. */
export interface AdminIdentity {
  name: string;
  role: AdminRole;
  /** "bearer": an Authorization header; "session": the browser's cookie. */
  via: "bearer" | "session";
}

declare module "fastify" {
  interface FastifyRequest {
    adminIdentity?: AdminIdentity;
  }
  interface FastifyContextConfig {
    /** Public routes skip authentication (the page, its assets, login, the OpenAPI document). */
    public?: boolean;
    /** An action name marks a route as mutating: operator only, audited under this name. */
    action?: string;
  }
}

const digest = (s: string) => createHash("sha256").update(s).digest();

/** Finds the token's owner in constant time per configured token. */
export function matchToken(tokens: readonly { name: string; role: AdminRole; digest: Buffer }[], presented: string): { name: string; role: AdminRole } | undefined {
  const d = digest(presented);
  let found: { name: string; role: AdminRole } | undefined;
  for (const t of tokens) if (timingSafeEqual(d, t.digest) && !found) found = { name: t.name, role: t.role };
  return found;
}

export function digestTokens(tokens: readonly AdminToken[]): { name: string; role: AdminRole; digest: Buffer }[] {
  return tokens.map((t) => ({ name: t.name, role: t.role, digest: digest(t.token) }));
}

const SAFE_METHODS = new Set(["GET", "HEAD", "OPTIONS"]);

const deny = (reply: FastifyReply, status: number, error: string, message: string, headers: Record<string, string> = {}) => sendErrorBody(reply, status, { error, message }, headers);

/**
 * The onRequest hook of every admin route: 503 when no token is configured, 401 without a valid
 * bearer token or session, 403 for a session's mutating request without its CSRF token, and 403
 * for a viewer's action. Runs before the body is parsed, so a refused request costs nothing.
 */
export function authenticate(tokens: ReturnType<typeof digestTokens>, sessions: SessionRegistry) {
  return async (request: FastifyRequest, reply: FastifyReply): Promise<void> => {
    const config = request.routeOptions.config;
    if (config.public) return;
    if (tokens.length === 0) {
      return deny(reply, 503, "admin_disabled", "admin routes are disabled: no admin token is configured (TETHER_ADMIN_TOKEN or TETHER_ADMIN_TOKENS)");
    }
    const header = request.headers.authorization;
    if (header !== undefined) {
      const m = /^Bearer\s+(.+)$/i.exec(header);
      const who = m ? matchToken(tokens, m[1]!.trim()) : undefined;
      if (!who) return unauthorized(reply);
      request.adminIdentity = { ...who, via: "bearer" };
    } else {
      const session = sessions.get(request.cookies[SESSION_COOKIE]);
      if (!session) return unauthorized(reply);
      // The cookie rides along on any request the browser makes, cross-site forms included
      // (ports do not make another site): only our own page can read the CSRF token.
      if (!SAFE_METHODS.has(request.method)) {
        const presented = request.headers[CSRF_HEADER];
        if (typeof presented !== "string" || !timingSafeEqual(digest(presented), digest(session.csrfToken))) {
          return deny(reply, 403, "forbidden", `CSRF: a mutating request with the session cookie must carry the session's ${CSRF_HEADER} header`);
        }
      }
      request.adminIdentity = { name: session.name, role: session.role, via: "session" };
    }
    if (config.action && request.adminIdentity.role !== "operator") {
      return deny(reply, 403, "forbidden", `${config.action} needs an operator token; ${request.adminIdentity.name} is a ${request.adminIdentity.role}`);
    }
  };
}

function unauthorized(reply: FastifyReply) {
  return deny(reply, 401, "unauthorized", "a valid admin bearer token or session is required", { "www-authenticate": 'Bearer realm="tether-admin"' });
}
