/** Base of every error tether throws: a stable `code` for callers and an optional `cause`. */
export class TetherError extends Error {
  readonly code: string;
  constructor(code: string, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = new.target.name;
    this.code = code;
  }
}

/** Bad input from a caller (API payload, admin filter, option): names what was wrong. */
export class ValidationError extends TetherError {
  readonly field: string;
  constructor(field: string, message: string) {
    super("E_VALIDATION", `${field}: ${message}`);
    this.field = field;
  }
}

/** A failure that may succeed later (429, 5xx, timeout, connection refused). */
export class RetryableSinkError extends TetherError {
  constructor(message: string, options?: { cause?: unknown }) {
    super("E_SINK_RETRYABLE", message, options);
  }
}

/** A failure that will not succeed by retrying the same input (mapping error, too large). */
export class PermanentSinkError extends TetherError {
  constructor(message: string, options?: { cause?: unknown }, code = "E_SINK_PERMANENT") {
    super(code, message, options);
  }
}

/**
 * The reason downstream calls of a drain pass are aborted when its deadline is reached. The
 * pass still commits what it decided: the jobs whose calls were cut are retried with backoff.
 */
export class DeadlineExceededError extends TetherError {
  constructor(ms: number, options?: { cause?: unknown }) {
    super("E_DEADLINE", `drain deadline of ${ms} ms reached`, options);
  }
}

/** A row to update or delete does not exist. */
export class NotFoundError extends TetherError {
  constructor(what: string) {
    super("E_NOT_FOUND", `${what} not found`);
  }
}
