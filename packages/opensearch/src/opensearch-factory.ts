import type { Client } from "@opensearch-project/opensearch";
import type { SinkFactory } from "@tether/core";
import { OpenSearchSink, type OpenSearchSinkOptions } from "./opensearch-sink.js";

export interface OpenSearchFactoryOptions extends Omit<OpenSearchSinkOptions, "client"> {
  /** Node URL. Default: the process's own (OPENSEARCH_URL when TETHER_SINK=opensearch), else http://127.0.0.1:9201. */
  url?: string;
  /** A configured client instead of `url`. */
  client?: Client;
}

/**
 * The OpenSearch sink for `tether.config.ts`. Whatever is not set here comes from the process
 * that loads the config (its OPENSEARCH_URL and TETHER_INDEX_PREFIX), so one config serves
 * every environment.
 *
 * @example
 * export default defineConfig({ collections: [products], sink: opensearch({ requestTimeoutMs: 5000 }) });
 */
export function opensearch(opts: OpenSearchFactoryOptions = {}): SinkFactory {
  const { url, client, ...rest } = opts;
  return (env) =>
    new OpenSearchSink({
      ...rest,
      client: client ?? url ?? env.url ?? "http://127.0.0.1:9201",
      indexPrefix: rest.indexPrefix ?? env.indexPrefix ?? "",
    });
}
