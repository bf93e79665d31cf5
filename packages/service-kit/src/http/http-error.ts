/**
 * The JSON body of every error answer of every Tether HTTP service (see the README, "Errors").
 * `error` is a stable code from `ERROR_CODES`, `field` names the offending input as a dotted
 * path (`tags.3`, `id`, `ids.12`, `limit`) when one input is to blame, `message` is for humans and may change.
 */
export interface ErrorBody {
  error: string;
  field?: string;
  message: string;
}

/** Every `error` code Tether's HTTP services answer, with its status. */
export const ERROR_CODES = {
  validation: 400,
  invalid_json: 400,
  bad_request: 400,
  unauthorized: 401,
  forbidden: 403,
  not_found: 404,
  method_not_allowed: 405,
  request_timeout: 408,
  conflict: 409,
  payload_too_large: 413,
  unsupported_media_type: 415,
  headers_too_large: 431,
  internal: 500,
  admin_disabled: 503,
  database_unavailable: 503,
  search_unavailable: 503,
  service_unavailable: 503,
} as const;

export type ErrorCode = keyof typeof ERROR_CODES;

/**
 * An error that is an HTTP answer: throw it from a route (or a plugin's hook) and the error
 * contract renders `{ error: code, field?, message }` with the code's status.
 *
 * @example
 * throw new HttpError("search_unavailable", "search is unavailable; retry later", { cause: err });
 */
export class HttpError extends Error {
  readonly code: ErrorCode;
  readonly statusCode: number;
  readonly field: string | undefined;
  /** Extra response headers (e.g. `Allow`, `WWW-Authenticate`). */
  readonly headers: Record<string, string>;
  constructor(code: ErrorCode, message: string, options: { field?: string; cause?: unknown; headers?: Record<string, string> } = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = "HttpError";
    this.code = code;
    this.statusCode = ERROR_CODES[code];
    this.field = options.field;
    this.headers = options.headers ?? {};
  }

  get body(): ErrorBody {
    return { error: this.code, ...(this.field !== undefined ? { field: this.field } : {}), message: this.message };
  }
}
