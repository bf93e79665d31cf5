import type { Client } from "@opensearch-project/opensearch";
import { resolveConnection, type ConnectionOptions, type SinkFactory } from "@tether/core";
import { openSearchClientOptions } from "./opensearch-client-options.js";
import { openSearchModule } from "./opensearch-module.js";
import { OpenSearchSink, type OpenSearchSinkOptions } from "./opensearch-sink.js";

export interface OpenSearchFactoryOptions
  extends Omit<OpenSearchSinkOptions, "client" | "requestTimeoutMs" | "maxBulkBytes">,
    Omit<ConnectionOptions, "apiKey" | "cloudId" | "caFingerprint"> {
  /** A configured client instead of the connection settings (which are then not read). */
  client?: Client;
}

/**
 * The OpenSearch sink for `tether.config.ts`. Whatever is not set here comes from the process
 * that loads the config: OPENSEARCH_URL and the other OPENSEARCH_* connection variables
 * (credentials, SigV4 region and service, CA, client certificate, timeout; processes pass them
 * when TETHER_SINK=opensearch), TETHER_BULK_MAX_BYTES and TETHER_INDEX_PREFIX, so one config
 * serves every environment. A connection group the config sets wins over the environment's
 * whole (see `resolveConnection`); a missing or contradictory setting throws
 * `ConnectionSettingError` naming it when the process builds the sink.
 *
 * @example
 * export default defineConfig({ collections: [products], sink: opensearch({ requestTimeoutMs: 5000 }) });
 * // OpenSearch Service, signed with the AWS credentials of the process's role:
 * sink: opensearch({ url: "https://search-shop-abc123.eu-west-1.es.amazonaws.com", aws: { region: "eu-west-1" } });
 */
export function opensearch(opts: OpenSearchFactoryOptions = {}): SinkFactory {
  // Everything that is not the sink's own option is a connection setting, checked by resolveConnection
  // (an option the engine does not have is refused there, not dropped).
  const { client, indexPrefix, retries, refresh, replicas, ...connection } = opts;
  const sinkOptions = { retries, refresh, replicas };
  return (env) => {
    const c = resolveConnection("opensearch", { ...env.connection, ...(env.url && !env.connection?.url ? { url: { variable: "OPENSEARCH_URL", value: env.url } } : {}) }, connection as ConnectionOptions);
    return new OpenSearchSink({
      ...sinkOptions,
      client: client ?? new (openSearchModule().Client)(openSearchClientOptions(c)),
      requestTimeoutMs: c.requestTimeoutMs,
      maxBulkBytes: c.maxBulkBytes,
      indexPrefix: indexPrefix ?? env.indexPrefix ?? "",
      ...(env.actor ? { actor: env.actor } : {}),
    });
  };
}
