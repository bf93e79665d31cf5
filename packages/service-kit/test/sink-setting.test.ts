import { describe, expect, it } from "vitest";
import { elasticsearch, ElasticsearchSink } from "@tether/elasticsearch";
import { opensearch, OpenSearchSink } from "@tether/opensearch";
import { sinkSetting } from "@tether/service-kit";

describe("choosing the sink from the environment", () => {
  it("takes Elasticsearch by default and OpenSearch when TETHER_SINK says so, each with its own URL", async () => {
    expect(sinkSetting({ ELASTICSEARCH_URL: "http://127.0.0.1:9200" })).toEqual({ kind: "elasticsearch", url: "http://127.0.0.1:9200" });
    const os = sinkSetting({ TETHER_SINK: "opensearch", ELASTICSEARCH_URL: "http://127.0.0.1:9200", OPENSEARCH_URL: "http://127.0.0.1:9201" });
    expect(os).toEqual({ kind: "opensearch", url: "http://127.0.0.1:9201" });
    const sink = opensearch()({ url: os.url, indexPrefix: "p_" });
    expect(sink).toBeInstanceOf(OpenSearchSink);
    expect((sink as OpenSearchSink).indexName("x")).toBe("p_x");
    const es = elasticsearch()({ url: sinkSetting({ ELASTICSEARCH_URL: "http://127.0.0.1:9200" }).url });
    expect(es).toBeInstanceOf(ElasticsearchSink);
    await Promise.all([sink.close?.(), es.close?.()]);
  });

  it("names the missing URL variable and rejects an unknown sink", () => {
    expect(() => sinkSetting({ TETHER_SINK: "opensearch", ELASTICSEARCH_URL: "http://127.0.0.1:9200" })).toThrow("OPENSEARCH_URL: required when TETHER_SINK=opensearch");
    expect(() => sinkSetting({})).toThrow("ELASTICSEARCH_URL: required when TETHER_SINK=elasticsearch");
    expect(() => sinkSetting({ TETHER_SINK: "solr", ELASTICSEARCH_URL: "http://x" })).toThrow('TETHER_SINK: must be one of elasticsearch, opensearch (got "solr")');
  });
});
