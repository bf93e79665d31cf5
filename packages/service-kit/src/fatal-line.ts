/**
 * Exit codes of a service that could not start (sysexits.h), so an orchestrator or an operator
 * can tell a bad configuration from a dependency that is down.
 * - 78 (`config`): the environment (or a connection setting of the config) is invalid; the log
 *   line names each variable.
 * - 69 (`unavailable`): Postgres could not be reached at start-up (migrations need it).
 * - 70 (`failed`): any other start-up failure.
 */
export const EXIT_CODES = { config: 78, unavailable: 69, failed: 70 } as const;

/** One fatal JSON log line in pino's layout, for a failure before (or without) a logger. */
export function fatalLine(service: string, msg: string, fields: Record<string, unknown>): string {
  // pino's layout (level 60 = fatal), written by hand: the logger needs LOG_LEVEL, which may be the invalid part.
  return `${JSON.stringify({ level: 60, time: Date.now(), service, ...fields, msg })}\n`;
}

