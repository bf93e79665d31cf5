import type { FastifyError, FastifyReply, FastifyRequest } from "fastify";
import { NotFoundError, ValidationError } from "@tether/core";

/** The JSON body of every error the admin routes answer. `field` names the offending input on 400s. */
export interface AdminErrorBody {
  error: string;
  message: string;
  field?: string;
}

function fieldOf(v: { instancePath?: string; params?: Record<string, unknown> }, context: string | undefined): string {
  const path = (v.instancePath ?? "").replace(/^\//, "").replace(/\//g, ".");
  const prop = v.params?.missingProperty ?? v.params?.additionalProperty;
  const leaf = typeof prop === "string" ? (path ? `${path}.${prop}` : prop) : path;
  return leaf || context || "body";
}

/** Maps errors of the admin routes to a status and a JSON body; never echoes internals. */
export function sendAdminError(err: FastifyError | Error, request: FastifyRequest, reply: FastifyReply): FastifyReply {
  const send = (status: number, body: AdminErrorBody) => reply.status(status).type("application/json").send(body);
  const fe = err as FastifyError;
  if (fe.validation && fe.validation.length > 0) {
    const v = fe.validation[0]!;
    const field = fieldOf(v as never, fe.validationContext);
    return send(400, { error: "validation", field, message: v.keyword === "additionalProperties" ? `${field}: unknown field` : `${field}: ${v.message ?? "is invalid"}` });
  }
  if (err instanceof ValidationError) return send(400, { error: "validation", field: err.field, message: err.message });
  if (err instanceof NotFoundError) return send(404, { error: "not_found", message: err.message });
  if (fe.code === "FST_ERR_CTP_BODY_TOO_LARGE") return send(413, { error: "payload_too_large", message: fe.message });
  if (typeof fe.statusCode === "number" && fe.statusCode >= 400 && fe.statusCode < 500) {
    return send(fe.statusCode, { error: fe.statusCode === 415 ? "unsupported_media_type" : "bad_request", message: fe.message });
  }
  request.log.error({ err }, "admin request failed");
  return send(500, { error: "internal", message: "internal error" });
}
