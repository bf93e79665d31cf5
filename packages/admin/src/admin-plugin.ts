import type { FastifyInstance } from "fastify";
import fastifyCookie from "@fastify/cookie";
import fastifySwagger from "@fastify/swagger";
import { errorContract } from "@tether/service-kit";
import type { TypeBoxTypeProvider } from "@fastify/type-provider-typebox";
import { authenticate, digestTokens } from "./admin-auth.js";
import type { AdminContext } from "./admin-context.js";
import { resolveAdminOptions, type AdminOptions } from "./admin-options.js";
import { adminValidatorCompiler } from "./admin-validator.js";
import { ConsoleSessions } from "./console-sessions.js";
import { auditHook } from "./audit-hook.js";
import { auditRoutes } from "./routes/audit-routes.js";
import { deadJobRoutes } from "./routes/dead-job-routes.js";
import { drainerRoutes } from "./routes/drainer-routes.js";
import { jobRoutes } from "./routes/job-routes.js";
import { laneRoutes } from "./routes/lane-routes.js";
import { overviewRoutes } from "./routes/overview-routes.js";
import { pageRoutes } from "./routes/page-routes.js";
import { reindexRoutes } from "./routes/reindex-routes.js";
import { sessionRoutes } from "./routes/session-routes.js";
import { traceRoutes } from "./routes/trace-routes.js";
import { verifyRoutes } from "./routes/verify-routes.js";
import { VerifyRunner } from "./verify-runner.js";

/**
 * The page's policy: scripts, styles and data only from this origin, no inline script or
 * style, no framing, no plugins. Entity data is user input (annotation text); with this
 * policy even a rendering mistake could not run it.
 */
export const CONTENT_SECURITY_POLICY =
  "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; font-src 'self'; " +
  "base-uri 'none'; form-action 'self'; frame-ancestors 'none'; object-src 'none'";

/**
 * The admin console: a JSON API (documented at `<prefix>/openapi.json`) and the web page that
 * uses it. Register it with a prefix (the annotations API uses `/admin`).
 *
 * @example
 * await app.register(tetherAdmin, {
 *   prefix: "/admin", db, sink, collections: [annotations],
 *   tokens: [{ name: "ops", role: "operator", token: process.env.ADMIN_TOKEN! }],
 * });
 */
export async function tetherAdmin(parent: FastifyInstance, opts: AdminOptions & { prefix?: string }): Promise<void> {
  const options = resolveAdminOptions(opts);
  const app = parent.withTypeProvider<TypeBoxTypeProvider>();
  const tokens = digestTokens(options.tokens);
  const sessions = new ConsoleSessions(options.db, tokens, options.sessionTtlMs);
  const verifyRunner = new VerifyRunner(options);
  const ctx: AdminContext = { options, verifyRunner };
  const prefix = app.prefix || "/";

  // Tether's one error contract ({ error, field?, message }); a no-op when the host has it.
  await app.register(errorContract);
  if (!app.hasDecorator("swagger")) {
    await app.register(fastifySwagger, {
      openapi: {
        openapi: "3.1.0",
        info: {
          title: "Tether admin API",
          version: "1",
          description:
            "Every route answers JSON and needs `Authorization: Bearer <token>` (or the console's session cookie plus the x-csrf-token header on mutating requests). " +
            "Viewer tokens read; operator tokens also act (403 otherwise). Every action, and every refusal that knows whose it was, is recorded in the audit log. Lists are filterable and paginated by cursor.",
        },
        components: { securitySchemes: { bearer: { type: "http", scheme: "bearer" } } },
        security: [{ bearer: [] }],
      },
    });
  }
  if (!app.hasRequestDecorator("cookies")) await app.register(fastifyCookie);

  app.setValidatorCompiler(adminValidatorCompiler());
  app.addHook("onRequest", authenticate(tokens, sessions));
  app.addHook("onSend", auditHook(options.db, options.logger));
  app.addHook("onSend", async (_request, reply, payload) => {
    reply.header("content-security-policy", CONTENT_SECURITY_POLICY);
    reply.header("x-content-type-options", "nosniff");
    reply.header("referrer-policy", "no-referrer");
    reply.header("x-frame-options", "DENY");
    if (!reply.hasHeader("cache-control")) reply.header("cache-control", "no-store");
    return payload;
  });
  app.addHook("onClose", async () => verifyRunner.close());

  app.get("/openapi.json", { config: { public: true }, schema: { hide: true } }, async () => app.swagger());
  await pageRoutes(app, options.webDist);
  await sessionRoutes(app, ctx, { tokens, sessions, cookiePath: prefix });
  await overviewRoutes(app, ctx);
  await laneRoutes(app, ctx);
  await jobRoutes(app, ctx);
  await deadJobRoutes(app, ctx);
  await reindexRoutes(app, ctx);
  await verifyRoutes(app, ctx);
  await traceRoutes(app, ctx);
  await drainerRoutes(app, ctx);
  await auditRoutes(app, ctx);
}
