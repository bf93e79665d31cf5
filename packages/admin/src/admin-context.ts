import type { FastifyInstance, RawReplyDefaultExpression, RawRequestDefaultExpression, RawServerDefault, FastifyBaseLogger } from "fastify";
import type { TypeBoxTypeProvider } from "@fastify/type-provider-typebox";
// Brings the request.adminIdentity augmentation into every program that uses the context.
import type {} from "./admin-auth.js";
import type { ResolvedAdminOptions } from "./admin-options.js";
import type { VerifyRunner } from "./verify-runner.js";

/** The admin routes' Fastify instance, typed by the TypeBox schemas of each route. */
export type AdminApp = FastifyInstance<RawServerDefault, RawRequestDefaultExpression, RawReplyDefaultExpression, FastifyBaseLogger, TypeBoxTypeProvider>;

/** What every route module needs. */
export interface AdminContext {
  options: ResolvedAdminOptions;
  verifyRunner: VerifyRunner;
}
