import { cleanEnv, str, url } from "envalid";
import { envReporter, listenPort, logLevel, nonNegativeInt, positiveInt, sinkSettingOrExit, type SinkSetting } from "@tether/service-kit";

export interface CatalogEnv {
  DATABASE_URL: string;
  /**
   * TETHER_SINK (elasticsearch, the default, or opensearch) and that engine's connection
   * (ELASTICSEARCH_URL, default http://127.0.0.1:9200, and the other ELASTICSEARCH_* variables;
   * or OPENSEARCH_URL and the OPENSEARCH_* ones), read as the CLI and the drainer read it.
   */
  SINK: SinkSetting;
  /** Default 3100; 0 picks a free port (logged in the "listening" line). */
  PORT: number;
  /** The Tether config. Default: catalog.config.ts of this service. */
  TETHER_CONFIG: string | undefined;
  /** Prepended to every index name. Default "". */
  TETHER_INDEX_PREFIX: string;
  /** Bearer token of POST /reindex; unset disables it (503). */
  CATALOG_ADMIN_TOKEN: string | undefined;
  /** Overrides the config's options.writer.directSyncTimeoutMs when set. Default: the config's, else 500. */
  TETHER_DIRECT_SYNC_TIMEOUT_MS: number | undefined;
  /** Overrides the config's options.writer.graceMs when set. Default: the config's, else 60000. */
  TETHER_GRACE_MS: number | undefined;
  LOG_LEVEL: string;
}

/** Parses the catalog's environment once; a bad variable is one JSON line naming it, and exit 78. */
export function loadEnv(source: NodeJS.ProcessEnv = process.env): CatalogEnv {
  const env = cleanEnv(source, {
    DATABASE_URL: url({ desc: "Postgres connection string" }),
    PORT: listenPort({ default: 3100 }),
    TETHER_CONFIG: str({ default: undefined }),
    TETHER_INDEX_PREFIX: str({ default: "" }),
    CATALOG_ADMIN_TOKEN: str({ default: undefined }),
    TETHER_DIRECT_SYNC_TIMEOUT_MS: positiveInt({ default: undefined }),
    TETHER_GRACE_MS: nonNegativeInt({ default: undefined }),
    LOG_LEVEL: logLevel(),
  }, { reporter: envReporter("catalog-api", source) });
  return {
    DATABASE_URL: env.DATABASE_URL,
    SINK: sinkSettingOrExit(
      "catalog-api",
      source.TETHER_SINK === "opensearch" ? source : { ...source, ELASTICSEARCH_URL: source.ELASTICSEARCH_URL || (source.ELASTICSEARCH_CLOUD_ID ? undefined : "http://127.0.0.1:9200") },
    ),
    PORT: env.PORT,
    TETHER_CONFIG: env.TETHER_CONFIG || undefined,
    TETHER_INDEX_PREFIX: env.TETHER_INDEX_PREFIX,
    CATALOG_ADMIN_TOKEN: env.CATALOG_ADMIN_TOKEN || undefined,
    TETHER_DIRECT_SYNC_TIMEOUT_MS: env.TETHER_DIRECT_SYNC_TIMEOUT_MS,
    TETHER_GRACE_MS: env.TETHER_GRACE_MS,
    LOG_LEVEL: env.LOG_LEVEL,
  };
}
