import type { Client } from "@elastic/elasticsearch";
import type { SinkFactory } from "@tether/core";
import { ElasticsearchSink, type ElasticsearchSinkOptions } from "./elasticsearch-sink.js";

export interface ElasticsearchFactoryOptions extends Omit<ElasticsearchSinkOptions, "client"> {
  /** Node URL. Default: the process's own (ELASTICSEARCH_URL for the CLI and the drainer), else http://127.0.0.1:9200. */
  url?: string;
  /** A configured client instead of `url`. */
  client?: Client;
}

/**
 * The Elasticsearch sink for `tether.config.ts`. Whatever is not set here comes from the
 * process that loads the config (its ELASTICSEARCH_URL and TETHER_INDEX_PREFIX), so one config
 * serves every environment.
 *
 * @example
 * export default defineConfig({ collections: [products], sink: elasticsearch({ requestTimeoutMs: 5000 }) });
 */
export function elasticsearch(opts: ElasticsearchFactoryOptions = {}): SinkFactory {
  const { url, client, ...rest } = opts;
  return (env) =>
    new ElasticsearchSink({
      ...rest,
      client: client ?? url ?? env.url ?? "http://127.0.0.1:9200",
      indexPrefix: rest.indexPrefix ?? env.indexPrefix ?? "",
    });
}
