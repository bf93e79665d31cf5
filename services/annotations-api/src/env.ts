import { bool, cleanEnv, str, url } from "envalid";
import { parseAdminTokens, type AdminToken } from "@tether/admin";
import { envReporter, listenPort, logLevel, nonNegativeInt, otelEnv, positiveInt, sinkEnvSpecs, sinkSettingOrExit, type SinkSetting } from "@tether/service-kit";

export interface ApiEnv {
  DATABASE_URL: string;
  /**
   * TETHER_SINK (elasticsearch, default, or opensearch) and that engine's connection, read as the
   * CLI and the drainer read it: hand `SINK.environment` to the config's sink factory.
   */
  SINK: SinkSetting;
  /** Default 3000; 0 picks a free port (logged in the "listening" line). */
  PORT: number;
  /** An operator token named "admin" for the admin console; with TETHER_ADMIN_TOKENS unset too, admin routes answer 503. */
  TETHER_ADMIN_TOKEN: string | undefined;
  /** More named tokens: `name:role:token,...` with role viewer or operator. */
  TETHER_ADMIN_TOKENS: AdminToken[];
  /** tether.config.ts of the admin routes. Default: ./tether.config.ts. */
  TETHER_CONFIG: string | undefined;
  /** Prepended to every Elasticsearch index name. Default "". */
  TETHER_INDEX_PREFIX: string;
  /** Overrides the config's options.writer.directSyncTimeoutMs when set. Default: the config's, else 500. */
  TETHER_DIRECT_SYNC_TIMEOUT_MS: number | undefined;
  /** Overrides the config's options.writer.graceMs when set. Default: the config's, else 60000. */
  TETHER_GRACE_MS: number | undefined;
  /** false: writes leave every sync to the drainer (Postgres only on the request path). Default true. */
  TETHER_DIRECT_SYNC: boolean;
  /**
   * The writer's per-write statements as named prepared statements (`createDb`'s
   * `preparedStatements`). Default true; false behind PgBouncer in transaction mode before 1.21
   * (or with `max_prepared_statements = 0`), which cannot keep them.
   */
  TETHER_PREPARED_STATEMENTS: boolean;
  /** Consecutive failed direct syncs that open the breaker; 0 turns it off. Default 5. */
  TETHER_BREAKER_FAILURES: number;
  /** How long the breaker stays open before a probe. Default 5000. */
  TETHER_BREAKER_COOLDOWN_MS: number;
  /** Default 65536. */
  TETHER_BODY_LIMIT_BYTES: number;
  LOG_LEVEL: string;
  /** The OpenTelemetry `OTEL_*` variables, for `startTelemetry` (validated there). */
  OTEL: NodeJS.ProcessEnv;
}

/** Parses the API's environment once; when something is wrong, logs one JSON line naming each variable (never its value) and exits 78. */
export function loadEnv(source: NodeJS.ProcessEnv = process.env): ApiEnv {
  const env = cleanEnv(source, {
    DATABASE_URL: url({ desc: "Postgres connection string" }),
    ...sinkEnvSpecs,
    PORT: listenPort({ default: 3000 }),
    TETHER_ADMIN_TOKEN: str({ default: undefined }),
    TETHER_ADMIN_TOKENS: str({ default: "", desc: "name:role:token,... (role viewer or operator)" }),
    TETHER_CONFIG: str({ default: undefined }),
    TETHER_INDEX_PREFIX: str({ default: "" }),
    TETHER_DIRECT_SYNC_TIMEOUT_MS: positiveInt({ default: undefined }),
    TETHER_GRACE_MS: nonNegativeInt({ default: undefined }),
    TETHER_DIRECT_SYNC: bool({ default: true }),
    TETHER_PREPARED_STATEMENTS: bool({ default: true }),
    TETHER_BREAKER_FAILURES: nonNegativeInt({ default: 5 }),
    TETHER_BREAKER_COOLDOWN_MS: positiveInt({ default: 5_000 }),
    TETHER_BODY_LIMIT_BYTES: positiveInt({ default: 65_536 }),
    LOG_LEVEL: logLevel(),
  }, { reporter: envReporter("annotations-api", source) });
  return {
    DATABASE_URL: env.DATABASE_URL,
    SINK: sinkSettingOrExit("annotations-api", source),
    PORT: env.PORT,
    TETHER_ADMIN_TOKEN: env.TETHER_ADMIN_TOKEN === "" ? undefined : env.TETHER_ADMIN_TOKEN,
    TETHER_ADMIN_TOKENS: parseAdminTokens(env.TETHER_ADMIN_TOKENS),
    TETHER_CONFIG: env.TETHER_CONFIG || undefined,
    TETHER_INDEX_PREFIX: env.TETHER_INDEX_PREFIX,
    TETHER_DIRECT_SYNC_TIMEOUT_MS: env.TETHER_DIRECT_SYNC_TIMEOUT_MS,
    TETHER_GRACE_MS: env.TETHER_GRACE_MS,
    TETHER_DIRECT_SYNC: env.TETHER_DIRECT_SYNC,
    TETHER_PREPARED_STATEMENTS: env.TETHER_PREPARED_STATEMENTS,
    TETHER_BREAKER_FAILURES: env.TETHER_BREAKER_FAILURES,
    TETHER_BREAKER_COOLDOWN_MS: env.TETHER_BREAKER_COOLDOWN_MS,
    TETHER_BODY_LIMIT_BYTES: env.TETHER_BODY_LIMIT_BYTES,
    LOG_LEVEL: env.LOG_LEVEL,
    OTEL: otelEnv(source),
  };
}
