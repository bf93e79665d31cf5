import type { FastifyError, FastifyReply, FastifyRequest } from "fastify";
import { NotFoundError, PG_CONNECTION_EXCEPTION_CLASS, PgErrorCode, pgErrorCode, ValidationError } from "@tether/core";

/** The JSON body of every error answer. `field` names the offending input on 400s. */
export interface ErrorBody {
  error: string;
  message: string;
  field?: string;
}

/** Search could not reach Elasticsearch (or it failed): 503, never an empty 200. */
export class SearchUnavailableError extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = "SearchUnavailableError";
  }
}

const CONNECTION_CODES = new Set(["ECONNREFUSED", "ECONNRESET", "ETIMEDOUT", "ENOTFOUND", "EAI_AGAIN", "EPIPE", "EHOSTUNREACH", "ENETUNREACH"]);
// Server shutting down, not accepting connections, or out of connection slots.
const CONNECTION_SQLSTATES = new Set<string>([PgErrorCode.adminShutdown, PgErrorCode.crashShutdown, PgErrorCode.cannotConnectNow, PgErrorCode.tooManyConnections]);

/** True when Postgres could not be reached (as opposed to rejecting a statement). */
export function isConnectionError(err: unknown): boolean {
  const e = err as { code?: unknown; message?: unknown; errors?: unknown[] } | null;
  if (!e) return false;
  if (typeof e.code === "string" && CONNECTION_CODES.has(e.code)) return true;
  const state = pgErrorCode(err);
  if (state && (state.startsWith(PG_CONNECTION_EXCEPTION_CLASS) || CONNECTION_SQLSTATES.has(state))) return true;
  const msg = typeof e.message === "string" ? e.message : "";
  // pg's pool and client report these without a code.
  if (/timeout exceeded when trying to connect|Connection terminated|connect ECONNREFUSED|Client has encountered a connection error/i.test(msg)) return true;
  // AggregateError from a dual-stack connect.
  return Array.isArray(e.errors) && e.errors.some(isConnectionError);
}

/** Field name from an ajv error: "tags.0", or the missing / unknown property. */
function fieldOf(v: { instancePath?: string; params?: Record<string, unknown> }, context: string | undefined): string {
  const path = (v.instancePath ?? "").replace(/^\//, "").replace(/\//g, ".");
  const prop = v.params?.missingProperty ?? v.params?.additionalProperty;
  const leaf = typeof prop === "string" ? (path ? `${path}.${prop}` : prop) : path;
  return leaf || context || "body";
}

/** Maps every error to an honest status and a JSON body. */
export function sendError(err: FastifyError | Error, request: FastifyRequest, reply: FastifyReply): FastifyReply {
  const send = (status: number, body: ErrorBody) => reply.status(status).type("application/json").send(body);
  const fe = err as FastifyError;
  if (fe.validation && fe.validation.length > 0) {
    const v = fe.validation[0]!;
    const field = fieldOf(v as never, fe.validationContext);
    const unknown = v.keyword === "additionalProperties";
    const message = unknown ? `${field}: unknown field` : `${field}: ${v.message ?? "is invalid"}`;
    return send(400, { error: "validation", field, message });
  }
  if (err instanceof ValidationError) return send(400, { error: "validation", field: err.field, message: err.message });
  if (err instanceof NotFoundError) return send(404, { error: "not_found", message: err.message });
  if (err instanceof SearchUnavailableError) return send(503, { error: "search_unavailable", message: err.message });
  if (fe.code === "FST_ERR_CTP_BODY_TOO_LARGE") return send(413, { error: "payload_too_large", message: fe.message });
  if (typeof fe.statusCode === "number" && fe.statusCode >= 400 && fe.statusCode < 500) {
    return send(fe.statusCode, { error: fe.statusCode === 415 ? "unsupported_media_type" : "bad_request", message: fe.message });
  }
  if (isConnectionError(err)) {
    request.log.error({ err }, "postgres unreachable");
    return send(503, { error: "database_unavailable", message: "the database is unreachable; retry later" });
  }
  request.log.error({ err }, "request failed");
  const state = pgErrorCode(err);
  return send(500, { error: "internal", message: state ? `database error ${state}` : "internal error" });
}
