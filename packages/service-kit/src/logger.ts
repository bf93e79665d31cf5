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

/** Replaces the password of any `scheme://user:password@host` inside a string with `***`. */
export function scrubSecrets(text: string): string {
  return text.replace(CREDENTIALS_IN_URL, "$1:***@");
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
 * A service's pino logger: JSON lines, secrets redacted by key, and credentials inside URLs
 * masked in every top-level string (error messages from drivers quote connection strings).
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
      logMethod(args, method) {
        const scrubbed = args.map((a) => (typeof a === "string" ? scrubSecrets(a) : a)) as Parameters<typeof method>;
        method.apply(this, scrubbed);
      },
    },
  };
  return opts.destination ? pino(options, opts.destination) : pino(options);
}
