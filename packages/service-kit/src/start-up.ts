import { EnvMissingError, type ReporterOptions } from "envalid";
import type { Logger } from "pino";
import { isConnectionError } from "./http/connection-error.js";
import { scrubSecrets } from "./logger.js";

/**
 * Exit codes of a service that could not start (sysexits.h), so an orchestrator or an operator
 * can tell a bad configuration from a dependency that is down.
 * - 78 (`config`): the environment is invalid (the log line names each variable).
 * - 69 (`unavailable`): Postgres could not be reached at start-up (migrations need it).
 * - 70 (`failed`): any other start-up failure.
 */
export const EXIT_CODES = { config: 78, unavailable: 69, failed: 70 } as const;

type Write = (line: string) => void;
const stdout: Write = (line) => process.stdout.write(line);

function fatalLine(service: string, msg: string, fields: Record<string, unknown>): string {
  // pino's layout (level 60 = fatal), written by hand: the logger needs LOG_LEVEL, which may be the invalid part.
  return `${JSON.stringify({ level: 60, time: Date.now(), service, ...fields, msg })}\n`;
}

/**
 * An envalid reporter that writes ONE JSON log line naming every invalid or missing variable
 * and exits with `EXIT_CODES.config`. Values are never printed (a malformed connection string
 * still holds its password): a validator's message that quotes the value gets it withheld.
 * `source` is the environment being parsed (envalid hands reporters only the valid part).
 *
 * @example
 * cleanEnv(process.env, spec, { reporter: envReporter("drainer", process.env) });
 */
export function envReporter<T>(
  service: string,
  source: Record<string, string | undefined>,
  io: { write?: Write; exit?: (code: number) => never } = {},
): (opts: ReporterOptions<T>) => void {
  const write = io.write ?? stdout;
  const exit = io.exit ?? process.exit;
  return ({ errors }) => {
    const names = Object.keys(errors);
    if (names.length === 0) return;
    const problems: Record<string, string> = {};
    for (const name of names.sort()) {
      const err = (errors as Record<string, Error | undefined>)[name];
      const raw = source[name];
      let text = err instanceof EnvMissingError ? "is required" : (err?.message ?? "is invalid");
      if (typeof raw === "string" && raw !== "") text = text.split(raw).join("<value withheld>");
      // Validators quote what they read, possibly trimmed or re-encoded: withhold any quoted part.
      problems[name] = scrubSecrets(text.replace(/"[^"]*"/g, '"<value withheld>"'));
    }
    write(fatalLine(service, `invalid configuration: ${names.join(", ")}`, { exitCode: EXIT_CODES.config, invalidEnv: problems }));
    exit(EXIT_CODES.config);
  };
}

/** The fields of a start-up error worth logging: never a stack (it names our files, not the cause). */
function describe(err: unknown): { code?: string; message: string } {
  const e = err as { code?: unknown; message?: unknown; errors?: unknown[] } | null;
  const first = Array.isArray(e?.errors) && e.errors.length > 0 ? (e.errors[0] as { message?: unknown; code?: unknown }) : undefined;
  const message = typeof e?.message === "string" && e.message !== "" ? e.message : typeof first?.message === "string" ? first.message : String(err);
  const code = typeof e?.code === "string" ? e.code : typeof first?.code === "string" ? first.code : undefined;
  return { ...(code ? { code } : {}), message: scrubSecrets(message) };
}

/**
 * Runs a service's start-up; if it fails (Postgres unreachable, migrations refused, a port in
 * use), logs ONE JSON line and exits with `EXIT_CODES.unavailable` or `EXIT_CODES.failed`
 * instead of an unhandled rejection's stack trace.
 *
 * @example
 * await startService(logger, async () => { await migrate(db, sets); await app.listen({ port }); });
 */
export async function startService(logger: Logger, start: () => Promise<void>, exit: (code: number) => never = process.exit): Promise<void> {
  try {
    await start();
  } catch (err) {
    const exitCode = isConnectionError(err) ? EXIT_CODES.unavailable : EXIT_CODES.failed;
    const what = exitCode === EXIT_CODES.unavailable ? "start-up failed: Postgres is unreachable" : "start-up failed";
    logger.fatal({ error: describe(err), exitCode }, what);
    logger.flush?.();
    exit(exitCode);
  }
}
