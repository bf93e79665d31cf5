import { PG_CONNECTION_EXCEPTION_CLASS, PgErrorCode, pgErrorCode, postgresTlsProblem } from "@tether/core/internal";

const CONNECTION_CODES = new Set(["ECONNREFUSED", "ECONNRESET", "ETIMEDOUT", "ENOTFOUND", "EAI_AGAIN", "EPIPE", "EHOSTUNREACH", "ENETUNREACH"]);
// Server shutting down, not accepting connections, or out of connection slots.
const CONNECTION_SQLSTATES = new Set<string>([PgErrorCode.adminShutdown, PgErrorCode.crashShutdown, PgErrorCode.cannotConnectNow, PgErrorCode.tooManyConnections]);

/** True when Postgres could not be reached (as opposed to rejecting a statement), a failed TLS handshake included. */
export function isConnectionError(err: unknown): boolean {
  const e = err as { code?: unknown; message?: unknown; errors?: unknown[] } | null;
  if (!e) return false;
  if (typeof e.code === "string" && CONNECTION_CODES.has(e.code)) return true;
  if (postgresTlsProblem(err) !== undefined) return true;
  const state = pgErrorCode(err);
  if (state && (state.startsWith(PG_CONNECTION_EXCEPTION_CLASS) || CONNECTION_SQLSTATES.has(state))) return true;
  const msg = typeof e.message === "string" ? e.message : "";
  // pg's pool and client report these without a code.
  if (/timeout exceeded when trying to connect|Connection terminated|connect ECONNREFUSED|Client has encountered a connection error/i.test(msg)) return true;
  // AggregateError from a dual-stack connect.
  return Array.isArray(e.errors) && e.errors.some(isConnectionError);
}
