/**
 * @tether/admin — the admin console as a Fastify plugin: a JSON API (OpenAPI at
 * `<prefix>/openapi.json`) to see and steer the queue, trace any entity and audit every action,
 * and the web page that uses it.
 *
 * Terminology
 * - token: a named secret with a role; `viewer` reads, `operator` also acts.
 * - session: the browser's login, an HttpOnly SameSite=Strict cookie plus a CSRF token, kept in
 *   Postgres (tether.console_session) so every replica of the API serves it.
 * - action: a mutating route; operator only, recorded in tether.audit_log (refusals too).
 * - trace: one entity's versions on both sides, its jobs and its recent events.
 */
export { tetherAdmin, CONTENT_SECURITY_POLICY } from "./admin-plugin.js";
export { parseAdminTokens, resolveAdminOptions, type AdminOptions, type AdminRole, type AdminToken, type AdminLogger } from "./admin-options.js";
export { CSRF_HEADER, SESSION_COOKIE, type AdminIdentity } from "./admin-auth.js";
// The trace lives in core, shared with `tether trace`; re-exported here for the console's users.
export { traceEntity, type EntityTrace, type TraceVerdict } from "@tether/core/internal";
export { WEB_DIST } from "./web-dist.js";
