import { createHash, timingSafeEqual } from "node:crypto";
import type {} from "@fastify/cookie";
import type { FastifyReply, FastifyRequest } from "fastify";
import { sendErrorBody } from "@tether/service-kit";
import type { AdminRole, AdminToken } from "./admin-options.js";
import type { AdminSession, ConsoleSessions, SessionLookup, TokenDigest } from "./console-sessions.js";

export const SESSION_COOKIE = "tether_admin_session";
export const CSRF_HEADER = "x-csrf-token";

/** Who a request acts as. */
export interface AdminIdentity {
  name: string;
  role: AdminRole;
  /** "bearer": an Authorization header; "session": the browser's cookie. */
  via: "bearer" | "session";
}

/** The audit row a request will leave, decided when it is authenticated (or refused). */
export interface AuditIntent {
  actor: string;
  role: string;
  action: string;
  /** `METHOD /path` of a refused request to a route that has no action of its own. */
  route?: string;
}

declare module "fastify" {
  interface FastifyRequest {
    adminIdentity?: AdminIdentity;
    /** The browser session the request came with (its cookie and CSRF token), when live. */
    adminSession?: { cookie: string; session: AdminSession };
    adminAudit?: AuditIntent;
  }
  interface FastifyContextConfig {
    /** Public routes skip authentication (the page, its assets, login, the OpenAPI document). */
    public?: boolean;
    /** An action name marks a route as mutating: operator only, audited under this name. */
    action?: string;
    /** An audited route any role may use (log out), recorded under this name. */
    audit?: string;
  }
}

const digest = (s: string) => createHash("sha256").update(s).digest();

/** Finds the token's owner in constant time per configured token. */
export function matchToken(tokens: readonly TokenDigest[], presented: string): TokenDigest | undefined {
  const d = digest(presented);
  let found: TokenDigest | undefined;
  for (const t of tokens) if (timingSafeEqual(d, t.digest) && !found) found = t;
  return found;
}

export function digestTokens(tokens: readonly AdminToken[]): TokenDigest[] {
  return tokens.map((t) => ({ name: t.name, role: t.role, digest: digest(t.token) }));
}

const SAFE_METHODS = new Set(["GET", "HEAD", "OPTIONS"]);

const deny = (reply: FastifyReply, status: number, error: string, message: string, headers: Record<string, string> = {}) => sendErrorBody(reply, status, { error, message }, headers);

const ENDED: Record<Exclude<SessionLookup["state"], "live" | "unknown">, Record<string, string>> = {
  expired: { expired: "the session expired (idle for longer than its lifetime): log in again" },
  revoked: {
    logout: "the session was logged out: log in again",
    token_removed: "the session's token is no longer configured: log in with a current token",
  },
};

/**
 * The onRequest hook of every admin route: 503 when no token is configured, 401 without a valid
 * bearer token or live session, 403 for a session's mutating request without its CSRF token,
 * and 403 for a viewer's action. Runs before the body is parsed, so a refused request costs
 * nothing. Every refusal that knows who it was (a session that expired or was revoked, a missing
 * CSRF token, a viewer's action) is audited, as is every request to an audited route.
 */
export function authenticate(tokens: readonly TokenDigest[], sessions: ConsoleSessions) {
  return async (request: FastifyRequest, reply: FastifyReply): Promise<void> => {
    const config = request.routeOptions.config;
    if (config.public) return;
    if (tokens.length === 0) {
      return deny(reply, 503, "admin_disabled", "admin routes are disabled: no admin token is configured (TETHER_ADMIN_TOKEN or TETHER_ADMIN_TOKENS)");
    }
    const action = config.action ?? config.audit;
    // A refusal of a route without an action of its own is recorded under the request itself.
    const intent = (actor: string, role: string): AuditIntent =>
      action ? { actor, role, action } : { actor, role, action: SAFE_METHODS.has(request.method) ? "read" : "request", route: `${request.method} ${request.routeOptions.url ?? request.url}` };
    const header = request.headers.authorization;
    if (header !== undefined) {
      const m = /^Bearer\s+(.+)$/i.exec(header);
      const who = m ? matchToken(tokens, m[1]!.trim()) : undefined;
      if (!who) {
        // Nobody known: only an attempt at an action is worth a row (reads would let anyone fill the table).
        if (action) request.adminAudit = intent("unknown", "none");
        return unauthorized(reply);
      }
      request.adminIdentity = { name: who.name, role: who.role, via: "bearer" };
    } else {
      const cookie = request.cookies[SESSION_COOKIE];
      const found = await sessions.lookup(cookie);
      if (found.state === "unknown") {
        if (action) request.adminAudit = intent("unknown", "none");
        return unauthorized(reply);
      }
      if (found.state !== "live") {
        request.adminAudit = intent(found.name, found.role);
        return unauthorized(reply, ENDED[found.state][found.reason]);
      }
      // The cookie rides along on any request the browser makes, cross-site forms included
      // (ports do not make another site): only our own page can read the CSRF token.
      if (!SAFE_METHODS.has(request.method)) {
        const presented = request.headers[CSRF_HEADER];
        if (typeof presented !== "string" || !timingSafeEqual(digest(presented), digest(found.session.csrfToken))) {
          request.adminAudit = intent(found.session.name, found.session.role);
          return deny(reply, 403, "forbidden", `CSRF: a mutating request with the session cookie must carry the session's ${CSRF_HEADER} header`);
        }
      }
      request.adminIdentity = { name: found.session.name, role: found.session.role, via: "session" };
      request.adminSession = { cookie: cookie!, session: found.session };
    }
    if (action) request.adminAudit = intent(request.adminIdentity.name, request.adminIdentity.role);
    if (config.action && request.adminIdentity.role !== "operator") {
      return deny(reply, 403, "forbidden", `${config.action} needs an operator token; ${request.adminIdentity.name} is a ${request.adminIdentity.role}`);
    }
  };
}

function unauthorized(reply: FastifyReply, message = "a valid admin bearer token or session is required") {
  return deny(reply, 401, "unauthorized", message, { "www-authenticate": 'Bearer realm="tether-admin"' });
}
