/** Bad invocation (missing or conflicting options): exit code 2. */
export class UsageError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "UsageError";
  }
}

export const EXIT_OK = 0;
export const EXIT_FAILURE = 1;
export const EXIT_USAGE = 2;
/** `drain --until-empty` stopped with work only an operator can unblock (parked, paused, failing). */
export const EXIT_WORK_LEFT = 3;
/** `drain --until-empty` reached its --timeout with work left. */
export const EXIT_TIMEOUT = 4;

/** The verb ran and failed (work left undone): exit code 1 unless told otherwise, with this message. */
export class CommandFailedError extends Error {
  constructor(
    message: string,
    readonly exitCode: number = EXIT_FAILURE,
  ) {
    super(message);
    this.name = "CommandFailedError";
  }
}

/** tether's tables are not in the database yet. */
export class SchemaMissingError extends Error {
  readonly code = "schema_missing";
  constructor() {
    super("tether.job does not exist");
    this.name = "SchemaMissingError";
  }
}
