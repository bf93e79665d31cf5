/**
 * The connection settings each engine has, the variables they are read from, and the options
 * a sink factory takes for them. Which source wins is decided in connection-settings.ts.
 */

/** The engines; as `SinkKind` (kept here so this module imports nothing). */
export type EngineKind = "elasticsearch" | "opensearch";

/** The connection fields the environment can give. */
export const CONNECTION_FIELDS = [
  "url",
  "username",
  "password",
  "apiKey",
  "bearerToken",
  "cloudId",
  "caFile",
  "caFingerprint",
  "clientCert",
  "clientKey",
  "requestTimeoutMs",
  "maxBulkBytes",
  "awsRegion",
  "awsService",
] as const;
export type ConnectionField = (typeof CONNECTION_FIELDS)[number];

/** What the environment said for each field, with the variable it came from (for errors). */
export type ConnectionEnvironment = Partial<Record<ConnectionField, { variable: string; value: string }>>;

const SUFFIX: Record<ConnectionField, string | undefined> = {
  url: "URL",
  username: "USERNAME",
  password: "PASSWORD",
  apiKey: "API_KEY",
  bearerToken: "BEARER_TOKEN",
  cloudId: "CLOUD_ID",
  caFile: "CA_FILE",
  caFingerprint: "CA_FINGERPRINT",
  clientCert: "CLIENT_CERT",
  clientKey: "CLIENT_KEY",
  requestTimeoutMs: "REQUEST_TIMEOUT_MS",
  maxBulkBytes: undefined,
  awsRegion: "AWS_REGION",
  awsService: "AWS_SERVICE",
};
export const ONLY: Partial<Record<ConnectionField, EngineKind>> = { apiKey: "elasticsearch", cloudId: "elasticsearch", caFingerprint: "elasticsearch", awsRegion: "opensearch", awsService: "opensearch" };

/** The variable of the bulk size limit, the same for either engine. */
export const BULK_MAX_BYTES_VARIABLE = "TETHER_BULK_MAX_BYTES";

/**
 * The variables an engine's connection is read from, by field: `ELASTICSEARCH_API_KEY`,
 * `OPENSEARCH_AWS_REGION`, … Fields the engine does not have are absent.
 *
 * @example
 * connectionVariables("opensearch").awsRegion; // "OPENSEARCH_AWS_REGION"
 */
export function connectionVariables(kind: EngineKind): Partial<Record<ConnectionField, string>> {
  const prefix = kind === "opensearch" ? "OPENSEARCH_" : "ELASTICSEARCH_";
  const out: Partial<Record<ConnectionField, string>> = {};
  for (const field of CONNECTION_FIELDS) {
    if (ONLY[field] && ONLY[field] !== kind) continue;
    out[field] = field === "maxBulkBytes" ? BULK_MAX_BYTES_VARIABLE : `${prefix}${SUFFIX[field]!}`;
  }
  return out;
}

/** The connection options of a sink factory; every field optional (see the table above for defaults). */
export interface ConnectionOptions {
  /** One node URL or several (an array, or one string with commas). Credentials inside it count as the config's basic auth. */
  url?: string | readonly string[];
  username?: string;
  password?: string;
  /** Elasticsearch API key: `id:key`, or the encoded (base64) form Elasticsearch hands out. */
  apiKey?: string;
  /** Sent as `Authorization: Bearer <token>` (an Elasticsearch token, an OpenSearch JWT). */
  bearerToken?: string;
  /** Elastic Cloud id (`name:base64`), instead of `url`. */
  cloudId?: string;
  /** PEM file of the CA that signed the engine's certificate (TLS with a private CA). */
  caFile?: string;
  /** SHA-256 fingerprint of that CA (Elasticsearch prints it at first start), instead of `caFile`. */
  caFingerprint?: string;
  /** PEM files of a client certificate and its key (mutual TLS). */
  clientCert?: string;
  clientKey?: string;
  /** Timeout of one request when the caller gives none. Default 10000. */
  requestTimeoutMs?: number;
  /** Largest `_bulk` body sent, in bytes: bigger batches are split before sending. Default 5 MiB. */
  maxBulkBytes?: number;
  /** AWS SigV4 signing (OpenSearch Service, Serverless): credentials from the standard AWS chain. */
  aws?: { region?: string; service?: "es" | "aoss" };
}

