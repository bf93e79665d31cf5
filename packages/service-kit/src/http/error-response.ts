import type { FastifyError, FastifyRequest } from "fastify";
import { findTextProblem, NotFoundError, PG_DATA_EXCEPTION_CLASS, pgErrorCode, ValidationError } from "@tether/core/internal";
import { isConnectionError } from "./connection-error.js";
import { ERROR_CODES, HttpError, type ErrorBody, type ErrorCode } from "./http-error.js";

export interface ErrorResponse {
  status: number;
  body: ErrorBody;
  headers?: Record<string, string>;
}

const BY_STATUS = new Map<number, ErrorCode>([
  [400, "bad_request"],
  [401, "unauthorized"],
  [403, "forbidden"],
  [404, "not_found"],
  [405, "method_not_allowed"],
  [408, "request_timeout"],
  [409, "conflict"],
  [413, "payload_too_large"],
  [415, "unsupported_media_type"],
  [431, "headers_too_large"],
]);

const FASTIFY_CODES: Record<string, ErrorCode> = {
  FST_ERR_CTP_BODY_TOO_LARGE: "payload_too_large",
  FST_ERR_CTP_INVALID_MEDIA_TYPE: "unsupported_media_type",
  FST_ERR_CTP_EMPTY_JSON_BODY: "invalid_json",
  FST_ERR_CTP_INVALID_JSON_BODY: "invalid_json",
};

/** Field name from an ajv error: "tags.0", or the missing / unknown property. */
function fieldOf(v: { instancePath?: string; params?: Record<string, unknown> }, context: string | undefined): string {
  const path = (v.instancePath ?? "").replace(/^\//, "").replace(/\//g, ".");
  const prop = v.params?.missingProperty ?? v.params?.additionalProperty;
  const leaf = typeof prop === "string" ? (path ? `${path}.${prop}` : prop) : path;
  return leaf || context || "body";
}

/**
 * Which input a Postgres data exception most likely came from: the first string Postgres
 * cannot hold, else the body, else the query. A guess, which is why it is also logged.
 */
function dataExceptionField(request: FastifyRequest): string {
  for (const [name, value] of [["", request.body], ["", request.query], ["", request.params]] as const) {
    const found = findTextProblem(value, name);
    if (found) return found.field;
  }
  return request.body !== undefined && request.body !== null ? "body" : "query";
}

/**
 * Maps any error to its place in the error contract. Inputs Postgres refused (SQLSTATE class 22)
 * become a 400: a 5xx from bad input is a bug, and the caller must learn which input to fix.
 */
export function errorResponse(err: unknown, request: FastifyRequest): ErrorResponse & { log?: "gap" | "error" | "unavailable" } {
  if (err instanceof HttpError) return { status: err.statusCode, body: err.body, headers: err.headers };
  const fe = err as Partial<FastifyError> & { field?: unknown };
  if (fe.validation && fe.validation.length > 0) {
    const v = fe.validation[0]!;
    const field = fieldOf(v as never, fe.validationContext);
    const unknown = v.keyword === "additionalProperties";
    const message = unknown ? `${field}: unknown field` : `${field}: ${v.message ?? "is invalid"}`;
    return { status: 400, body: { error: "validation", field, message } };
  }
  if (err instanceof ValidationError) return { status: 400, body: { error: "validation", field: err.field, message: err.message } };
  if (err instanceof NotFoundError) return { status: 404, body: { error: "not_found", message: err.message } };
  const code = typeof fe.code === "string" ? FASTIFY_CODES[fe.code] : undefined;
  if (code) return { status: ERROR_CODES[code], body: { error: code, ...(code === "invalid_json" ? { field: "body" } : {}), message: fe.message ?? code } };
  if (typeof fe.statusCode === "number" && fe.statusCode >= 400 && fe.statusCode < 500) {
    return { status: fe.statusCode, body: { error: BY_STATUS.get(fe.statusCode) ?? "bad_request", message: fe.message ?? "bad request" } };
  }
  if (isConnectionError(err)) {
    return { status: 503, body: { error: "database_unavailable", message: "the database is unreachable; retry later" }, log: "unavailable" };
  }
  const state = pgErrorCode(err);
  if (state?.startsWith(PG_DATA_EXCEPTION_CLASS)) {
    const field = dataExceptionField(request);
    return { status: 400, body: { error: "validation", field, message: `${field}: holds a value the database cannot store (SQLSTATE ${state})` }, log: "gap" };
  }
  return { status: 500, body: { error: "internal", message: `internal error (request ${request.id})` }, log: "error" };
}
