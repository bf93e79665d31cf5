import type { FastifyReply, FastifyRequest } from "fastify";
import type { Kysely } from "kysely";
import { insertAudit } from "@tether/core/internal";
import type { AdminLogger } from "./admin-options.js";

const MAX_LIST = 50;
const MAX_RESULT_CHARS = 4000;

/** Parameters as recorded: body, route params and query, long id lists cut to their head and size. */
function paramsOf(request: FastifyRequest): Record<string, unknown> {
  const body = request.body && typeof request.body === "object" && !Array.isArray(request.body) ? (request.body as Record<string, unknown>) : {};
  const out: Record<string, unknown> = { ...(request.params as object), ...(request.query as object) };
  for (const [k, v] of Object.entries(body)) {
    out[k] = Array.isArray(v) && v.length > MAX_LIST ? { first: v.slice(0, MAX_LIST), count: v.length } : v;
  }
  if (request.adminAudit?.route) out.route = request.adminAudit.route;
  return out;
}

function resultOf(payload: unknown): unknown {
  if (typeof payload !== "string" || payload.length === 0) return null;
  if (payload.length > MAX_RESULT_CHARS) return { truncated: payload.slice(0, MAX_RESULT_CHARS) };
  try {
    return JSON.parse(payload);
  } catch {
    return { text: payload.slice(0, MAX_RESULT_CHARS) };
  }
}

/**
 * Records the audit row the authentication hook decided on (see `AuditIntent`): every request to
 * an audited route, done, refused or failed, and every refusal that knows whose it was, with its
 * parameters and answer.
 */
export function auditHook(db: Kysely<any>, logger: AdminLogger | undefined) {
  return async (request: FastifyRequest, reply: FastifyReply, payload: unknown): Promise<unknown> => {
    const intent = request.adminAudit;
    if (!intent) return payload;
    try {
      await insertAudit(db, { actor: intent.actor, role: intent.role, action: intent.action, params: paramsOf(request), status: reply.statusCode, result: resultOf(payload) });
    } catch (err) {
      // The action already happened: answer it, and say loudly that its record is missing.
      logger?.error({ action: intent.action, actor: intent.actor, err: err instanceof Error ? err.message : String(err) }, "could not write the audit log");
    }
    return payload;
  };
}
