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
 * Records every request to a route with an `action` (see FastifyContextConfig) that reached an
 * identity: done, refused (403) or failed, with its parameters and answer.
 */
export function auditHook(db: Kysely<any>, logger: AdminLogger | undefined) {
  return async (request: FastifyRequest, reply: FastifyReply, payload: unknown): Promise<unknown> => {
    const action = request.routeOptions.config.action;
    const who = request.adminIdentity;
    if (!action || !who) return payload;
    try {
      await insertAudit(db, { actor: who.name, role: who.role, action, params: paramsOf(request), status: reply.statusCode, result: resultOf(payload) });
    } catch (err) {
      // The action already happened: answer it, and say loudly that its record is missing.
      logger?.error({ action, actor: who.name, err: err instanceof Error ? err.message : String(err) }, "could not write the audit log");
    }
    return payload;
  };
}
