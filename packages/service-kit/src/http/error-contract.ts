import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from "fastify";
import fp from "fastify-plugin";
import { findTextProblem } from "@tether/core/internal";
import { errorResponse } from "./error-response.js";
import { HttpError, type ErrorBody } from "./http-error.js";
import { parseJsonBody } from "./json-body.js";
import { RouteMethods } from "./route-methods.js";

/** Sends an error-contract body. Use it where a hook answers by itself (401, 503). */
export function sendErrorBody(reply: FastifyReply, status: number, body: ErrorBody, headers: Record<string, string> = {}): FastifyReply {
  return reply.code(status).headers(headers).type("application/json; charset=utf-8").send(body);
}

function handleError(err: FastifyError | Error, request: FastifyRequest, reply: FastifyReply): FastifyReply {
  const r = errorResponse(err, request);
  const route = request.routeOptions.url ?? "unmatched";
  if (r.log === "gap") {
    // Postgres refused an input the edge let through: answerable as a 400, but a rule is missing.
    request.log.warn({ err, route, field: r.body.field }, "validation gap: the database refused an input the edge accepted");
  } else if (r.log === "unavailable") request.log.error({ err, route }, "postgres unreachable");
  else if (r.log === "error") request.log.error({ err, route }, "request failed");
  return sendErrorBody(reply, r.status, r.body, r.headers);
}

/** Refuses query strings whose percent-encoding is not UTF-8 (Fastify would keep them undecoded). */
function checkRawQuery(url: string): void {
  const q = url.indexOf("?");
  if (q < 0) return;
  for (const part of url.slice(q + 1).split("&")) {
    const eq = part.indexOf("=");
    const name = eq < 0 ? part : part.slice(0, eq);
    try {
      decodeURIComponent(part.replace(/\+/g, " "));
    } catch {
      let field = "query";
      try {
        field = decodeURIComponent(name) || "query";
      } catch {
        // The name itself is not UTF-8: name the query string as a whole.
      }
      throw new HttpError("validation", `${field}: is not valid percent-encoded UTF-8`, { field });
    }
  }
}

/**
 * Tether's error contract for a Fastify app, as a plugin: every 4xx and 5xx answers
 * `{ error, field?, message }` (see `ERROR_CODES`), including Fastify's own refusals; a known
 * path with another method answers 405 with `Allow`; JSON bodies are parsed strictly
 * (`parseJsonBody`) and other media types answer 415; query strings and path parameters obey
 * the same text rules; requests arriving while the app closes answer 503. Register it before
 * any route, and spread `errorContractServerOptions()` into the Fastify constructor for the
 * errors Node raises before a request exists. Registering it again (a plugin of an app that
 * already has it) does nothing.
 *
 * @example
 * const app = Fastify({ ...errorContractServerOptions() });
 * await app.register(errorContract);
 * app.get("/things/:id", handler);
 */
export const errorContract = fp(
  async (app: FastifyInstance) => {
    if (app.hasDecorator("tetherErrorContract")) return;
    app.decorate("tetherErrorContract", true);
    const routes = new RouteMethods();
    app.addHook("onRoute", (r) => routes.add(r.url, r.method));

    app.removeAllContentTypeParsers();
    app.addContentTypeParser("application/json", { parseAs: "buffer" }, (_request, body, done) => {
      try {
        done(null, parseJsonBody(body as Buffer));
      } catch (err) {
        done(err as Error, undefined);
      }
    });

    let closing = false;
    app.addHook("preClose", async () => {
      closing = true;
    });
    app.addHook("onRequest", async (_request, reply) => {
      if (closing) {
        reply.header("connection", "close");
        throw new HttpError("service_unavailable", "the service is shutting down; retry on another instance");
      }
    });
    app.addHook("preValidation", async (request) => {
      checkRawQuery(request.url);
      const found = findTextProblem(request.query, "") ?? findTextProblem(request.params, "");
      if (found) {
        const field = found.field || "query";
        throw new HttpError("validation", `${field}: ${found.problem}`, { field });
      }
    });

    app.setErrorHandler(handleError);
    app.setNotFoundHandler((request, reply) => {
      const path = request.url.split("?")[0]!;
      const allowed = routes.allowed(path);
      // The path is the client's own text: echo a bounded piece of it.
      const shown = path.length > 100 ? `${path.slice(0, 100)}…` : path;
      if (allowed.length > 0) {
        return sendErrorBody(reply, 405, { error: "method_not_allowed", message: `${request.method} is not allowed on ${shown}; allowed: ${allowed.join(", ")}` }, { allow: allowed.join(", ") });
      }
      return sendErrorBody(reply, 404, { error: "not_found", message: `no route ${request.method} ${shown}` });
    });
  },
  { name: "tether-error-contract", fastify: "5.x" },
);
