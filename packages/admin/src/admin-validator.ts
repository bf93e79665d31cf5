import { Ajv } from "ajv";
import type { FastifySchemaCompiler } from "fastify";

/**
 * Validation of the admin routes, whatever the host application configured: bodies are taken
 * as sent (no coercion: "5" is not a number, unknown fields are refused, never stripped), while
 * query strings and path parameters, text by nature, are coerced to the schema's types
 * (`?limit=20`). Defaults from the schemas are filled in.
 */
export function adminValidatorCompiler(): FastifySchemaCompiler<unknown> {
  const base = { strict: false, useDefaults: true, allErrors: false, removeAdditional: false } as const;
  const strict = new Ajv({ ...base, coerceTypes: false });
  const coercing = new Ajv({ ...base, coerceTypes: "array" });
  return ({ schema, httpPart }) => (httpPart === "querystring" || httpPart === "params" ? coercing : strict).compile(schema as object);
}
