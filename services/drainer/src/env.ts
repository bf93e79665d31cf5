import { bool, cleanEnv, num, str, url } from "envalid";
import { envReporter, listenPort, logLevel, otelEnv, positiveInt, sinkEnvSpecs, sinkSettingOrExit, type SinkSetting } from "@tether/service-kit";

export interface DrainerEnv {
  DATABASE_URL: string;
  /**
   * TETHER_SINK (elasticsearch, default, or opensearch) and that engine's connection: its URL
   * (ELASTICSEARCH_URL or OPENSEARCH_URL) and other variables (credentials, CA, …; see docs/connecting.md).
   */
  SINK: SinkSetting;
  /** The config file when --config is not given. Default: ./tether.config.ts. */
  TETHER_CONFIG: string | undefined;
  /** Port of /healthz, /metrics and /alerts. Default 9464; 0 picks a free port (logged in "listening"). */
  METRICS_PORT: number;
  /** Prepended to every index name. Default "". */
  TETHER_INDEX_PREFIX: string;
  /** Pause between passes that came back short. Default 60000. */
  TETHER_DRAIN_INTERVAL_MS: number | undefined;
  /** Jobs claimed per pass. Default 2500. */
  TETHER_BATCH_SIZE: number | undefined;
  /** Passes writing to the engine at a time (plus one batch ahead) while batches come back full. Default 2. */
  TETHER_DRAIN_CONCURRENCY: number | undefined;
  /** Deadline of one drain transaction. Default 30000. */
  TETHER_DEADLINE_MS: number | undefined;
  /** Permanent per-item failures before a job is parked. Default 5. */
  TETHER_MAX_ATTEMPTS: number | undefined;
  /** Documents a pass bumps and enqueues while it expands fan-out jobs (one short transaction). Default 10000. */
  TETHER_FANOUT_CHUNK_SIZE: number | undefined;
  /** How often this replica attempts maintenance (sampling, gauges, pruning). Default 15000. */
  TETHER_MAINTENANCE_INTERVAL_MS: number | undefined;
  /** Interval between scheduled fast verify runs of each collection; 0: none. Default: the config's, else 3600000. */
  TETHER_VERIFY_INTERVAL_MS: number | undefined;
  /** Interval between scheduled deep verify runs of each collection; 0: none. Default: the config's, else 86400000. */
  TETHER_VERIFY_DEEP_INTERVAL_MS: number | undefined;
  /** Wake up on NOTIFY from due-now work (LISTEN on a dedicated session). Default true; false runs on the interval alone. */
  TETHER_LISTEN: boolean;
  /**
   * Where that session connects. Default DATABASE_URL. LISTEN does not work through a
   * transaction-mode pooler (PgBouncer): give Postgres itself or a session-mode pool here.
   */
  TETHER_LISTEN_DATABASE_URL: string;
  LOG_LEVEL: string;
  /** The OpenTelemetry `OTEL_*` variables, for `startTelemetry` (validated there). */
  OTEL: NodeJS.ProcessEnv;
}

/**
 * Parses the drainer's environment once; when something is wrong, logs one JSON line naming each
 * variable (never its value) and exits 78. The drain and maintenance settings, when set, override
 * the config's `options` (whose own defaults are core's; the daemon keeps 2 passes writing).
 */
export function loadEnv(source: NodeJS.ProcessEnv = process.env): DrainerEnv {
  const env = cleanEnv(source, {
    DATABASE_URL: url({ desc: "Postgres connection string" }),
    ...sinkEnvSpecs,
    TETHER_CONFIG: str({ desc: "tether.config.ts to load", default: undefined }),
    METRICS_PORT: listenPort({ default: 9464 }),
    TETHER_INDEX_PREFIX: str({ default: "" }),
    TETHER_DRAIN_INTERVAL_MS: positiveInt({ default: undefined }),
    TETHER_BATCH_SIZE: positiveInt({ default: undefined }),
    TETHER_DRAIN_CONCURRENCY: positiveInt({ default: undefined }),
    TETHER_DEADLINE_MS: positiveInt({ default: undefined }),
    TETHER_MAX_ATTEMPTS: positiveInt({ default: undefined }),
    TETHER_FANOUT_CHUNK_SIZE: positiveInt({ default: undefined }),
    TETHER_MAINTENANCE_INTERVAL_MS: positiveInt({ default: undefined }),
    TETHER_VERIFY_INTERVAL_MS: num({ default: undefined, desc: "fast verify interval in ms (0: none)" }),
    TETHER_VERIFY_DEEP_INTERVAL_MS: num({ default: undefined, desc: "deep verify interval in ms (0: none)" }),
    TETHER_LISTEN: bool({ default: true }),
    TETHER_LISTEN_DATABASE_URL: url({ default: undefined, desc: "session-mode Postgres connection string for LISTEN" }),
    LOG_LEVEL: logLevel(),
  }, { reporter: envReporter("drainer", source) });
  return {
    DATABASE_URL: env.DATABASE_URL,
    SINK: sinkSettingOrExit("drainer", source),
    TETHER_CONFIG: env.TETHER_CONFIG,
    METRICS_PORT: env.METRICS_PORT,
    TETHER_INDEX_PREFIX: env.TETHER_INDEX_PREFIX,
    TETHER_DRAIN_INTERVAL_MS: env.TETHER_DRAIN_INTERVAL_MS,
    TETHER_BATCH_SIZE: env.TETHER_BATCH_SIZE,
    TETHER_DRAIN_CONCURRENCY: env.TETHER_DRAIN_CONCURRENCY,
    TETHER_DEADLINE_MS: env.TETHER_DEADLINE_MS,
    TETHER_MAX_ATTEMPTS: env.TETHER_MAX_ATTEMPTS,
    TETHER_FANOUT_CHUNK_SIZE: env.TETHER_FANOUT_CHUNK_SIZE,
    TETHER_MAINTENANCE_INTERVAL_MS: env.TETHER_MAINTENANCE_INTERVAL_MS,
    TETHER_VERIFY_INTERVAL_MS: nonNegative("TETHER_VERIFY_INTERVAL_MS", env.TETHER_VERIFY_INTERVAL_MS),
    TETHER_VERIFY_DEEP_INTERVAL_MS: nonNegative("TETHER_VERIFY_DEEP_INTERVAL_MS", env.TETHER_VERIFY_DEEP_INTERVAL_MS),
    TETHER_LISTEN: env.TETHER_LISTEN,
    TETHER_LISTEN_DATABASE_URL: env.TETHER_LISTEN_DATABASE_URL ?? env.DATABASE_URL,
    LOG_LEVEL: env.LOG_LEVEL,
    OTEL: otelEnv(source),
  };
}

/** An interval that may be 0 (off) but not negative or fractional. */
function nonNegative(name: string, v: number | undefined): number | undefined {
  if (v !== undefined && !(Number.isSafeInteger(v) && v >= 0)) throw new RangeError(`${name} must be a non-negative integer (0 turns it off)`);
  return v;
}
