import { CommanderError } from "commander";
import { ConfigError, ValidationError } from "@tether/core";
import { PG_CONNECTION_EXCEPTION_CLASS, PgErrorCode, pgErrorCode, PermanentSinkError, RetryableSinkError } from "@tether/core/internal";
import { maskUrl, scrubSecrets } from "@tether/service-kit/lite";
import { CommandFailedError, EXIT_FAILURE, EXIT_OK, EXIT_USAGE, SchemaMissingError, UsageError } from "./cli-errors.js";

/** What a failed verb reports: one line on stderr, or `{ "error": … }` under --json. */
export interface CliErrorReport {
  /** Stable machine-readable kind: usage, schema_missing, postgres_unreachable, elasticsearch_unreachable, elasticsearch_error, failed. */
  code: string;
  message: string;
  exitCode: number;
}

/** Where the CLI was pointed, to name the service in a connection error (passwords masked). */
export interface CliTargets {
  databaseUrl?: string | undefined;
  elasticsearchUrl?: string | undefined;
}

const SOCKET_CODES = new Set(["ECONNREFUSED", "ECONNRESET", "ENOTFOUND", "EAI_AGAIN", "ETIMEDOUT", "EHOSTUNREACH", "ENETUNREACH", "EPIPE"]);

function causes(err: unknown): unknown[] {
  const out: unknown[] = [];
  for (let e = err, i = 0; e && i < 8; e = (e as { cause?: unknown }).cause, i++) out.push(e);
  return out;
}

const messageOf = (err: unknown) => (err instanceof Error ? err.message : String(err));

const ES_CONNECTION_ERRORS = new Set(["ConnectionError", "NoLivingConnectionsError", "TimeoutError"]);
const ES_CLIENT_ERRORS = new Set([...ES_CONNECTION_ERRORS, "ResponseError", "DeserializationError", "ProductNotSupportedError"]);
const isClientError = (e: unknown) => ES_CLIENT_ERRORS.has((e as Error | undefined)?.name ?? "") && (e as { meta?: unknown }).meta !== undefined;

/** Set for errors raised by the Elasticsearch client or the sink wrapping them. */
function fromElasticsearch(err: unknown): { connection: boolean } | undefined {
  const chain = causes(err);
  if (!chain.some((e) => e instanceof RetryableSinkError || e instanceof PermanentSinkError || isClientError(e))) return undefined;
  return { connection: chain.some((e) => ES_CONNECTION_ERRORS.has((e as Error | undefined)?.name ?? "")) };
}

function postgresConnection(err: unknown): boolean {
  const chain = causes(err);
  return chain.some((e) => {
    const sqlstate = pgErrorCode(e);
    if (sqlstate) {
      return (
        sqlstate.startsWith(PG_CONNECTION_EXCEPTION_CLASS) ||
        ([PgErrorCode.invalidPassword, PgErrorCode.invalidAuthorization, PgErrorCode.invalidCatalogName, PgErrorCode.cannotConnectNow, PgErrorCode.tooManyConnections] as string[]).includes(sqlstate)
      );
    }
    const code = (e as { code?: unknown })?.code;
    return (typeof code === "string" && SOCKET_CODES.has(code)) || /timeout exceeded when trying to connect|Connection terminated/i.test(messageOf(e));
  });
}

function schemaMissing(err: unknown): boolean {
  return causes(err).some((e) => {
    if (e instanceof SchemaMissingError) return true;
    const sqlstate = pgErrorCode(e);
    return (sqlstate === PgErrorCode.undefinedTable && /"tether\./.test(messageOf(e))) || sqlstate === PgErrorCode.invalidSchemaName;
  });
}

/** Classifies an error thrown by a verb (or by commander) into what the operator is told. */
export function describeCliError(err: unknown, targets: CliTargets): CliErrorReport {
  if (err instanceof CommanderError) return { code: "usage", message: err.message, exitCode: err.exitCode === 0 ? EXIT_OK : EXIT_USAGE };
  if (err instanceof UsageError || err instanceof ValidationError || err instanceof ConfigError) return { code: "usage", message: messageOf(err), exitCode: EXIT_USAGE };
  const pg = targets.databaseUrl ? maskUrl(targets.databaseUrl) : "DATABASE_URL";
  const es = targets.elasticsearchUrl ? maskUrl(targets.elasticsearchUrl) : "ELASTICSEARCH_URL";
  if (schemaMissing(err)) return { code: "schema_missing", message: `the tether schema is missing in Postgres at ${pg}: run \`tether migrate\` first`, exitCode: EXIT_FAILURE };
  const esErr = fromElasticsearch(err);
  if (esErr?.connection) return { code: "elasticsearch_unreachable", message: `cannot reach Elasticsearch at ${es}: ${scrubSecrets(messageOf(err))}`, exitCode: EXIT_FAILURE };
  if (esErr) return { code: "elasticsearch_error", message: `Elasticsearch at ${es} failed: ${scrubSecrets(messageOf(err))}`, exitCode: EXIT_FAILURE };
  if (postgresConnection(err)) return { code: "postgres_unreachable", message: `cannot connect to Postgres at ${pg}: ${scrubSecrets(messageOf(err))}`, exitCode: EXIT_FAILURE };
  if (err instanceof CommandFailedError) return { code: err.exitCode === EXIT_FAILURE ? "failed" : "work_left", message: err.message, exitCode: err.exitCode };
  return { code: "failed", message: scrubSecrets(messageOf(err)), exitCode: EXIT_FAILURE };
}
