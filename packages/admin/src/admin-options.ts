import type { Kysely } from "kysely";
import { WEB_DIST } from "./web-dist.js";
import { ValidationError, type AlertThresholds, type Collection, type Sink } from "@tether/core";

/** What a token may do: a viewer reads, an operator also acts. */
export type AdminRole = "viewer" | "operator";

/** A named token. The name is what the audit log records; the token itself is never stored or logged. */
export interface AdminToken {
  name: string;
  token: string;
  role: AdminRole;
}

/** The subset of a logger the plugin uses (pino fits). */
export interface AdminLogger {
  info(obj: object, msg?: string): void;
  warn(obj: object, msg?: string): void;
  error(obj: object, msg?: string): void;
}

/**
 * Options of the admin plugin. The same fields a `tether.config.ts` carries (db, collections,
 * sink), so a loaded config object can be passed straight in, plus the console's own.
 */
export interface AdminOptions {
  db: Kysely<any>;
  /** Collections the console traces, re-indexes and verifies. */
  collections: readonly Collection<any>[];
  /** The downstream store, read by the entity trace and verify runs. */
  sink: Sink;
  /** Named tokens. Empty: every admin route answers 503 (admin disabled). */
  tokens: readonly AdminToken[];
  logger?: AdminLogger;
  /** Thresholds of the alerts the overview and /alerts evaluate. Default: core's defaults. */
  alertThresholds?: AlertThresholds;
  /** Idle lifetime of a browser session. Default 8 hours. */
  sessionTtlMs?: number;
  /** A drainer not seen for this long is shown as gone. Default 90000 ms (3 heartbeats). */
  drainerStaleMs?: number;
  /** Set the cookie's Secure flag (serve the console over HTTPS). Default: when the request came over HTTPS. */
  secureCookie?: boolean;
  /** Largest body of POST /reindex (an id list). Default 8 MiB. */
  reindexBodyLimitBytes?: number;
  /** Folder of the built page (index.html and assets/). Default: the package's own web-dist/. */
  webDist?: string;
  /** Called when a verify run started from the console ends (tests wait on it). */
  onVerifyRunEnd?: (runId: string) => void;
}

export interface ResolvedAdminOptions extends Required<Omit<AdminOptions, "logger" | "alertThresholds" | "secureCookie" | "onVerifyRunEnd">> {
  logger: AdminLogger | undefined;
  alertThresholds: AlertThresholds;
  secureCookie: boolean | undefined;
  onVerifyRunEnd: ((runId: string) => void) | undefined;
  collectionsByName: ReadonlyMap<string, Collection<any>>;
}

const TOKEN_NAME = /^[A-Za-z0-9_.@-]{1,64}$/;

/** Fills defaults and validates once, naming the field that is wrong. */
export function resolveAdminOptions(o: AdminOptions): ResolvedAdminOptions {
  if (!o.db) throw new ValidationError("db", "is required");
  if (!o.sink) throw new ValidationError("sink", "is required");
  if (!Array.isArray(o.collections) || o.collections.length === 0) throw new ValidationError("collections", "must name at least one collection");
  const names = new Set<string>();
  const tokens = new Set<string>();
  for (const [i, t] of (o.tokens ?? []).entries()) {
    if (!t || typeof t.name !== "string" || !TOKEN_NAME.test(t.name)) throw new ValidationError(`tokens[${i}].name`, "must be 1-64 letters, digits or _.@-");
    if (t.role !== "viewer" && t.role !== "operator") throw new ValidationError(`tokens[${i}].role`, 'must be "viewer" or "operator"');
    if (typeof t.token !== "string" || t.token.length < 8) throw new ValidationError(`tokens[${i}].token`, "must be at least 8 characters");
    if (names.has(t.name)) throw new ValidationError(`tokens[${i}].name`, `"${t.name}" is used twice`);
    if (tokens.has(t.token)) throw new ValidationError(`tokens[${i}].token`, "is the same as another token's");
    names.add(t.name);
    tokens.add(t.token);
  }
  const byName = new Map<string, Collection<any>>();
  for (const c of o.collections) byName.set(c.name, c);
  const positive = (field: string, v: number) => {
    if (!Number.isInteger(v) || v <= 0) throw new ValidationError(field, `must be a positive integer, got ${String(v)}`);
    return v;
  };
  return {
    db: o.db,
    sink: o.sink,
    collections: o.collections,
    collectionsByName: byName,
    tokens: [...(o.tokens ?? [])],
    logger: o.logger,
    alertThresholds: o.alertThresholds ?? {},
    sessionTtlMs: positive("sessionTtlMs", o.sessionTtlMs ?? 8 * 3_600_000),
    drainerStaleMs: positive("drainerStaleMs", o.drainerStaleMs ?? 90_000),
    secureCookie: o.secureCookie,
    reindexBodyLimitBytes: positive("reindexBodyLimitBytes", o.reindexBodyLimitBytes ?? 8 * 1024 * 1024),
    webDist: o.webDist ?? WEB_DIST,
    onVerifyRunEnd: o.onVerifyRunEnd,
  };
}

/**
 * Parses `name:role:token` entries separated by commas (the format of TETHER_ADMIN_TOKENS), e.g.
 * `alice:operator:s3cret-1,grafana:viewer:s3cret-2`. The token is everything after the second colon.
 */
export function parseAdminTokens(spec: string): AdminToken[] {
  const out: AdminToken[] = [];
  for (const [i, part] of spec.split(",").map((s) => s.trim()).filter(Boolean).entries()) {
    const m = /^([^:]+):([^:]+):(.+)$/.exec(part);
    if (!m) throw new ValidationError(`tokens[${i}]`, "must look like name:role:token");
    out.push({ name: m[1]!, role: m[2] as AdminRole, token: m[3]! });
  }
  return out;
}
