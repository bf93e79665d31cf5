/** The CLI's environment, read once. Only DATABASE_URL is required, and only by verbs that need it. */
export interface CliEnv {
  /** The whole environment, for the sink's connection variables (read by core's `sinkEnvironment`). */
  source: NodeJS.ProcessEnv;
  DATABASE_URL: string | undefined;
  /** Which downstream: "elasticsearch" (default) or "opensearch". */
  TETHER_SINK: string;
  /** Default http://127.0.0.1:9200 ("" when ELASTICSEARCH_CLOUD_ID is set). */
  ELASTICSEARCH_URL: string;
  /** Default http://127.0.0.1:9201. */
  OPENSEARCH_URL: string;
  /** Default "". */
  TETHER_INDEX_PREFIX: string;
  /** The config file when --config is not given. Default: ./tether.config.ts. */
  TETHER_CONFIG: string | undefined;
  /** pino level of diagnostics on stderr. Default "warn". */
  LOG_LEVEL: string;
}

export function loadCliEnv(source: NodeJS.ProcessEnv = process.env): CliEnv {
  return {
    source,
    DATABASE_URL: source.DATABASE_URL || undefined,
    TETHER_SINK: source.TETHER_SINK || "elasticsearch",
    // No default beside a cloud id: the two name the address, and one source may give only one.
    ELASTICSEARCH_URL: source.ELASTICSEARCH_URL || (source.ELASTICSEARCH_CLOUD_ID ? "" : "http://127.0.0.1:9200"),
    OPENSEARCH_URL: source.OPENSEARCH_URL || "http://127.0.0.1:9201",
    TETHER_INDEX_PREFIX: source.TETHER_INDEX_PREFIX ?? "",
    TETHER_CONFIG: source.TETHER_CONFIG || undefined,
    LOG_LEVEL: source.LOG_LEVEL || "warn",
  };
}
