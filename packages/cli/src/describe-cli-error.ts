import { CommanderError } from "commander";
import { ConfigError, ConnectionSettingError, SinkPermissionError, ValidationError } from "@tether/core";
import { PG_CONNECTION_EXCEPTION_CLASS, PgErrorCode, pgErrorCode, PermanentSinkError, postgresTlsProblem, RetryableSinkError } from "@tether/core/internal";
import { maskUrl, scrubSecrets } from "@tether/service-kit/lite";
import { CommandFailedError, EXIT_FAILURE, EXIT_OK, EXIT_USAGE, SchemaMissingError, UsageError } from "./cli-errors.js";

/** What a failed verb reports: one line on stderr, or `{ "error": … }` under --json. */
export interface CliErrorReport {
  /**
   * Stable machine-readable kind: usage, invalid_setting (a connection setting of the engine,
   * named in the message), schema_missing, postgres_unreachable, elasticsearch_unreachable,
   * elasticsearch_error, authentication_failed (the engine refused the credentials),
   * forbidden (the engine refused a privilege: `privilege` and `index` say which, on what), failed.
   */
  code: string;
  message: string;
  exitCode: number;
  /** With `forbidden`: the privilege to grant. */
  privilege?: string;
  /** With `forbidden`: the concrete index (with its prefix) it is needed on; absent for a cluster privilege. */
  index?: string;
}

/** The report of a refused privilege: core's one sentence, with the privilege and the index as fields. */
export function forbiddenReport(err: SinkPermissionError): CliErrorReport {
  const { privilege, index } = err.refusal;
  return { code: "forbidden", message: scrubSecrets(err.message), exitCode: EXIT_FAILURE, privilege, ...(index ? { index } : {}) };
}

/** Where the CLI was pointed, to name the service in a connection error (passwords masked). */
export interface CliTargets {
  databaseUrl?: string | undefined;
  /** The engine's nodes, comma-separated (each password masked here). */
  elasticsearchUrl?: string | undefined;
  /** How messages name the engine. Default "Elasticsearch". */
  engine?: string;
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
const statusOf = (e: unknown): number | undefined => {
  const s = (e as { statusCode?: unknown; meta?: { statusCode?: unknown } } | undefined)?.statusCode ?? (e as { meta?: { statusCode?: unknown } } | undefined)?.meta?.statusCode;
  return typeof s === "number" ? s : undefined;
};

function fromElasticsearch(err: unknown): { connection: boolean; status?: number } | undefined {
  const chain = causes(err);
  if (!chain.some((e) => e instanceof RetryableSinkError || e instanceof PermanentSinkError || isClientError(e))) return undefined;
  return {
    connection: chain.some((e) => ES_CONNECTION_ERRORS.has((e as Error | undefined)?.name ?? "")),
    // 401 (the credentials) or 403 (a privilege): the sink's message says which and on what.
    ...(chain.map(statusOf).find((s) => s === 401 || s === 403) ? { status: chain.map(statusOf).find((s) => s === 401 || s === 403)! } : {}),
  };
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
  if (err instanceof ConnectionSettingError) return { code: "invalid_setting", message: messageOf(err), exitCode: EXIT_USAGE };
  if (err instanceof UsageError || err instanceof ValidationError || err instanceof ConfigError) return { code: "usage", message: messageOf(err), exitCode: EXIT_USAGE };
  const pg = targets.databaseUrl ? maskUrl(targets.databaseUrl) : "DATABASE_URL";
  const engine = targets.engine ?? "Elasticsearch";
  const es = targets.elasticsearchUrl ? targets.elasticsearchUrl.split(",").map((u) => maskUrl(u.trim())).join(",") : `${engine}'s URL`;
  if (schemaMissing(err)) return { code: "schema_missing", message: `the tether schema is missing in Postgres at ${pg}: run \`tether migrate\` first`, exitCode: EXIT_FAILURE };
  const refused = SinkPermissionError.in(err);
  if (refused) return forbiddenReport(refused);
  const esErr = fromElasticsearch(err);
  if (esErr?.connection) return { code: "elasticsearch_unreachable", message: `cannot reach ${engine} at ${es}: ${scrubSecrets(messageOf(err))}`, exitCode: EXIT_FAILURE };
  // The client's own messages span lines ("Root causes: …"): one line, as every other message.
  const oneLine = (text: string) => text.replace(/\s*\n\s*/g, " ");
  if (esErr?.status === 401) return { code: "authentication_failed", message: `${engine} at ${es} refused the credentials (HTTP 401): ${scrubSecrets(oneLine(messageOf(err)))}`, exitCode: EXIT_FAILURE };
  if (esErr?.status === 403) return { code: "forbidden", message: `${engine} at ${es} refused: ${scrubSecrets(oneLine(messageOf(err)))}`, exitCode: EXIT_FAILURE };
  if (esErr) return { code: "elasticsearch_error", message: `${engine} at ${es} failed: ${scrubSecrets(messageOf(err))}`, exitCode: EXIT_FAILURE };
  // TLS first: a certificate that did not verify is not "unreachable", and says what to fix.
  const tls = postgresTlsProblem(err, targets.databaseUrl);
  if (tls) return { code: "postgres_unreachable", message: `cannot connect to Postgres at ${pg}: ${scrubSecrets(tls)}`, exitCode: EXIT_FAILURE };
  if (postgresConnection(err)) return { code: "postgres_unreachable", message: `cannot connect to Postgres at ${pg}: ${scrubSecrets(messageOf(err))}`, exitCode: EXIT_FAILURE };
  if (err instanceof CommandFailedError) return { code: err.exitCode === EXIT_FAILURE ? "failed" : "work_left", message: err.message, exitCode: err.exitCode };
  return { code: "failed", message: scrubSecrets(messageOf(err)), exitCode: EXIT_FAILURE };
}
