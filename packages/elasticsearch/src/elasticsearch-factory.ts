import type { Client } from "@elastic/elasticsearch";
import { resolveConnection, type ConnectionOptions, type SinkFactory } from "@tether/core";
import { fingerprintTrust } from "./ca-fingerprint-problem.js";
import { elasticsearchClientOptions } from "./elasticsearch-client-options.js";
import { elasticsearchModule } from "./elasticsearch-module.js";
import { ElasticsearchSink, type ElasticsearchSinkOptions } from "./elasticsearch-sink.js";

export interface ElasticsearchFactoryOptions extends Omit<ElasticsearchSinkOptions, "client" | "requestTimeoutMs" | "maxBulkBytes">, Omit<ConnectionOptions, "aws"> {
  /** A configured client instead of the connection settings (which are then not read). */
  client?: Client;
}

/**
 * The Elasticsearch sink for `tether.config.ts`. Whatever is not set here comes from the
 * process that loads the config: ELASTICSEARCH_URL and the other ELASTICSEARCH_* connection
 * variables (credentials, CA, client certificate, timeout), TETHER_BULK_MAX_BYTES and
 * TETHER_INDEX_PREFIX, so one config serves every environment. A connection group the config
 * sets wins over the environment's whole (see `resolveConnection`); a missing or contradictory
 * setting throws `ConnectionSettingError` naming it when the process builds the sink.
 *
 * @example
 * export default defineConfig({ collections: [products], sink: elasticsearch({ requestTimeoutMs: 5000 }) });
 * // Elastic Cloud, the key from the process's environment:
 * sink: elasticsearch({ cloudId: "my-deployment:ZXUtd2VzdC0xLmF3cy5mb3VuZC5pbyRhYmMkZGVm", apiKey: process.env.ES_API_KEY });
 */
export function elasticsearch(opts: ElasticsearchFactoryOptions = {}): SinkFactory {
  // Everything that is not the sink's own option is a connection setting, checked by resolveConnection
  // (an option the engine does not have is refused there, not dropped).
  const { client, indexPrefix, retries, refresh, replicas, ...connection } = opts;
  const sinkOptions = { retries, refresh, replicas };
  return (env) => {
    const c = resolveConnection("elasticsearch", { ...env.connection, ...(env.url && !env.connection?.url ? { url: { variable: "ELASTICSEARCH_URL", value: env.url } } : {}) }, connection as ConnectionOptions);
    return new ElasticsearchSink({
      ...sinkOptions,
      client: client ?? new (elasticsearchModule().Client)(elasticsearchClientOptions(c)),
      requestTimeoutMs: c.requestTimeoutMs,
      maxBulkBytes: c.maxBulkBytes,
      indexPrefix: indexPrefix ?? env.indexPrefix ?? "",
      ...(env.actor ? { actor: env.actor } : {}),
      // A client given whole checks what it was told; a fingerprint of ours is refused when the node's chain cannot satisfy it.
      ...(!client && fingerprintTrust(c) ? { fingerprint: fingerprintTrust(c)! } : {}),
    });
  };
}
