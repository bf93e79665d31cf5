import { EnvMissingError, type ReporterOptions } from "envalid";
import { ConnectionSettingError } from "@tether/core";
import type { Logger } from "pino";
import { postgresTlsProblem } from "@tether/core/internal";
import { isConnectionError } from "./http/connection-error.js";
import { scrubSecrets } from "./logger.js";
import { EXIT_CODES, fatalLine } from "./fatal-line.js";

export { EXIT_CODES };

type Write = (line: string) => void;
const stdout: Write = (line) => process.stdout.write(line);

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
  const raw = typeof e?.message === "string" && e.message !== "" ? e.message : typeof first?.message === "string" ? first.message : String(err);
  const code = typeof e?.code === "string" ? e.code : typeof first?.code === "string" ? first.code : undefined;
  // A TLS failure says what to fix (the CA, the address) rather than Node's bare verification text.
  const message = postgresTlsProblem(err) ?? raw;
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
    if (err instanceof ConnectionSettingError) {
      // A connection setting the config's factory refused once the config met the environment.
      const problem = err.message.slice(err.setting.length + 2);
      logger.fatal({ exitCode: EXIT_CODES.config, [err.source === "environment" ? "invalidEnv" : "invalidConfig"]: { [err.setting]: problem } }, `invalid configuration: ${err.setting}`);
      logger.flush?.();
      exit(EXIT_CODES.config);
      return;
    }
    const exitCode = isConnectionError(err) ? EXIT_CODES.unavailable : EXIT_CODES.failed;
    const what = exitCode === EXIT_CODES.unavailable ? "start-up failed: Postgres is unreachable" : "start-up failed";
    logger.fatal({ error: describe(err), exitCode }, what);
    logger.flush?.();
    exit(exitCode);
  }
}
