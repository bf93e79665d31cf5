import { STATUS_CODES } from "node:http";
import type { Socket } from "node:net";
import type { FastifyError, FastifyReply, FastifyRequest, FastifyServerOptions } from "fastify";
import type { ErrorBody } from "./http-error.js";

// What Node's HTTP parser refused, in words a client can act on.
const PARSER_ERRORS: Record<string, string> = {
  HPE_INVALID_METHOD: "unknown HTTP method",
  HPE_INVALID_HEADER_TOKEN: "invalid header name or value",
  HPE_INVALID_CONTENT_LENGTH: "invalid Content-Length",
  HPE_UNEXPECTED_CONTENT_LENGTH: "Content-Length together with Transfer-Encoding",
  HPE_INVALID_TRANSFER_ENCODING: "invalid Transfer-Encoding",
  HPE_INVALID_CHUNK_SIZE: "invalid chunk size",
  HPE_INVALID_URL: "invalid request target",
  HPE_INVALID_VERSION: "invalid HTTP version",
  HPE_LF_EXPECTED: "malformed line ending",
  HPE_CR_EXPECTED: "malformed line ending",
};

function describe(err: NodeJS.ErrnoException): { status: number; body: ErrorBody } {
  if (err.code === "ERR_HTTP_REQUEST_TIMEOUT") return { status: 408, body: { error: "request_timeout", message: "the request was not received in time" } };
  if (err.code === "HPE_HEADER_OVERFLOW") return { status: 431, body: { error: "headers_too_large", message: "request headers are too large" } };
  const what = (err.code && PARSER_ERRORS[err.code]) ?? "malformed HTTP request";
  return { status: 400, body: { error: "bad_request", message: what } };
}

/**
 * Answers what Node's HTTP parser refuses before Fastify sees a request (bad headers,
 * conflicting lengths, unknown methods, oversized headers) with the error contract's body,
 * then closes the connection: the stream can no longer be trusted.
 */
export function clientErrorHandler(err: NodeJS.ErrnoException, socket: Socket): void {
  if (err.code === "ECONNRESET" || socket.destroyed) return;
  const { status, body } = describe(err);
  const text = JSON.stringify(body);
  if (socket.writable) {
    socket.write(`HTTP/1.1 ${status} ${STATUS_CODES[status] ?? "Error"}\r\nContent-Type: application/json; charset=utf-8\r\nContent-Length: ${Buffer.byteLength(text)}\r\nConnection: close\r\n\r\n${text}`);
  }
  socket.destroy();
}

/** Errors Fastify raises while routing (a malformed percent-encoding in the path). */
export function frameworkErrors(err: FastifyError, request: FastifyRequest, reply: FastifyReply): void {
  // Fastify's own messages quote the whole path back: say what is wrong instead.
  const maxParamLength = request.server?.initialConfig.routerOptions?.maxParamLength ?? 100;
  const what =
    err.code === "FST_ERR_BAD_URL"
      ? "is not a valid (percent-encoded UTF-8) path"
      : err.code === "FST_ERR_MAX_PARAM_LENGTH"
        ? `has a path segment longer than the router accepts (${maxParamLength} characters)`
        : "cannot be routed";
  const body: ErrorBody = { error: "bad_request", field: "url", message: `url: ${what}` };
  void reply.code(400).type("application/json; charset=utf-8").send(body);
}

/**
 * Server options the error contract needs at construction (Fastify takes them only there).
 * Spread them into `Fastify({...})` and register `errorContract`.
 *
 * @example
 * const app = Fastify({ ...errorContractServerOptions(), bodyLimit: 65_536 });
 * await app.register(errorContract);
 */
export function errorContractServerOptions(): Pick<FastifyServerOptions, "clientErrorHandler" | "frameworkErrors" | "return503OnClosing"> {
  // Our own closing check answers 503 with the contract's body instead of Fastify's.
  return { clientErrorHandler, frameworkErrors, return503OnClosing: false };
}
