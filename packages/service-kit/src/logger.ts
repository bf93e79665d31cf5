import pino from "pino";

/**
 * Keys whose values never reach the log, wherever they appear one level deep: tokens,
 * passwords, authorization headers. Connection strings are logged through `maskUrl` instead.
 */
export const REDACT_PATHS = [
  "password",
  "*.password",
  "token",
  "*.token",
  "adminToken",
  "*.adminToken",
  "authorization",
  "*.authorization",
  "headers.authorization",
  "*.headers.authorization",
  "req.headers.authorization",
  "req.headers.cookie",
  "DATABASE_URL",
  "ELASTICSEARCH_URL",
  "*.DATABASE_URL",
  "*.ELASTICSEARCH_URL",
];

const CREDENTIALS_IN_URL = /\b([a-z][a-z0-9+.-]*:\/\/[^\s:/@]+):[^\s@/]+@/gi;

// A query parameter whose name says it carries a credential (token=, access_token=, api_key=,
// password=, sig=, …); its value ends at the next separator or the end of the JSON string.
const SECRET_QUERY_PARAM = /([?&](?:[A-Za-z0-9_.%-]*(?:token|secret|passw(?:or)?d|pwd|auth|key|sig|session|jwt|credential)[A-Za-z0-9_.%-]*)=)(?:[^&#\s"\\]|\\.)*/gi;

/** Replaces the password of any `scheme://user:password@host` inside a string with `***`. */
export function scrubSecrets(text: string): string {
  return text.replace(CREDENTIALS_IN_URL, "$1:***@");
}

/**
 * Replaces the values of token-like query parameters (`?token=…`, `&api_key=…`) inside a string
 * with `[redacted]`: request URLs are logged, and a client may put a token where it does not belong.
 *
 * @example
 * redactQuery("/admin/queue?token=abc&limit=5"); // "/admin/queue?token=[redacted]&limit=5"
 */
export function redactQuery(text: string): string {
  return text.replace(SECRET_QUERY_PARAM, "$1[redacted]");
}

/** A connection string fit for logs: the password masked, everything else kept. */
export function maskUrl(raw: string): string {
  try {
    const u = new URL(raw);
    if (u.password) u.password = "***";
    return u.toString();
  } catch {
    return scrubSecrets(raw);
  }
}

/**
 * A service's pino logger: JSON lines, secrets redacted by key, credentials inside URLs
 * masked in every top-level string (error messages from drivers quote connection strings), and
 * token-like query parameters redacted anywhere in the line (request URLs).
 */
export function createLogger(opts: { service?: string; level?: string; destination?: pino.DestinationStream } = {}): pino.Logger {
  const options: pino.LoggerOptions = {
    level: opts.level ?? "info",
    base: { service: opts.service ?? "tether" },
    redact: { paths: REDACT_PATHS, censor: "[redacted]" },
    formatters: {
      log(obj) {
        const out: Record<string, unknown> = {};
        for (const [k, v] of Object.entries(obj)) out[k] = typeof v === "string" ? scrubSecrets(v) : v;
        return out;
      },
    },
    hooks: {
      // The last look at every line, after serializers (Fastify's `req.url` included).
      streamWrite: (line) => redactQuery(line),
      logMethod(args, method) {
        const scrubbed = args.map((a) => (typeof a === "string" ? scrubSecrets(a) : a)) as Parameters<typeof method>;
        method.apply(this, scrubbed);
      },
    },
  };
  return opts.destination ? pino(options, opts.destination) : pino(options);
}
