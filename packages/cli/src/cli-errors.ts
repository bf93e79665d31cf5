import { CommanderError } from "commander";
import { ConfigError, ValidationError } from "@tether/core";

/** Bad invocation (missing or conflicting options): exit code 2. */
export class UsageError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "UsageError";
  }
}

/** The verb ran and failed (nothing to retry, work left undone): exit code 1 with this message. */
export class CommandFailedError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "CommandFailedError";
  }
}

export const EXIT_OK = 0;
export const EXIT_FAILURE = 1;
export const EXIT_USAGE = 2;

/** Exit code of an error thrown by a verb or by commander itself. */
export function exitCodeOf(err: unknown): number {
  if (err instanceof CommanderError) return err.exitCode === 0 ? EXIT_OK : EXIT_USAGE;
  if (err instanceof UsageError || err instanceof ValidationError || err instanceof ConfigError) return EXIT_USAGE;
  return EXIT_FAILURE;
}

/** One line for stderr. */
export function describeCliError(err: unknown): string {
  if (err instanceof Error) return err.message;
  return String(err);
}
