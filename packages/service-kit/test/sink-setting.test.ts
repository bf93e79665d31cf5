import { describe, expect, it } from "vitest";
import { elasticsearch, ElasticsearchSink } from "@tether/elasticsearch";
import { opensearch, OpenSearchSink } from "@tether/opensearch";
import { sinkSetting, sinkSettingOrExit } from "@tether/service-kit";

describe("choosing the sink from the environment", () => {
  it("takes Elasticsearch by default and OpenSearch when TETHER_SINK says so, each with its own variables", async () => {
    const es = sinkSetting({ ELASTICSEARCH_URL: "http://127.0.0.1:9200" });
    expect(es).toMatchObject({ kind: "elasticsearch", url: "http://127.0.0.1:9200", connection: { nodes: ["http://127.0.0.1:9200"], auth: "none" } });
    const os = sinkSetting({ TETHER_SINK: "opensearch", ELASTICSEARCH_URL: "http://127.0.0.1:9200", OPENSEARCH_URL: "http://127.0.0.1:9201", TETHER_INDEX_PREFIX: "p_" });
    expect(os).toMatchObject({ kind: "opensearch", url: "http://127.0.0.1:9201" });
    const sink = opensearch()(os.environment);
    expect(sink).toBeInstanceOf(OpenSearchSink);
    expect((sink as OpenSearchSink).indexName("x")).toBe("p_x");
    const built = elasticsearch()(es.environment);
    expect(built).toBeInstanceOf(ElasticsearchSink);
    await Promise.all([sink.close?.(), built.close?.()]);
  });

  it("masks a password inside the URL and says where the credentials came from, never what they are", () => {
    const s = sinkSetting({ ELASTICSEARCH_URL: "https://app:hunter2@es-1:9200,https://app:hunter2@es-2:9200" });
    expect(s.url).toBe("https://es-1:9200,https://es-2:9200");
    expect(s.connection).toEqual({ nodes: ["https://es-1:9200", "https://es-2:9200"], auth: "basic from ELASTICSEARCH_URL", requestTimeoutMs: 10_000, maxBulkBytes: 5_242_880 });
    expect(JSON.stringify(s)).not.toContain("hunter2".repeat(1) + '"');
  });

  it("names the missing URL variable and rejects an unknown sink", () => {
    expect(() => sinkSetting({ TETHER_SINK: "opensearch", ELASTICSEARCH_URL: "http://127.0.0.1:9200" })).toThrow("OPENSEARCH_URL: required when TETHER_SINK=opensearch");
    expect(() => sinkSetting({})).toThrow("ELASTICSEARCH_URL: required when TETHER_SINK=elasticsearch (or ELASTICSEARCH_CLOUD_ID)");
    expect(() => sinkSetting({ TETHER_SINK: "solr", ELASTICSEARCH_URL: "http://x" })).toThrow('TETHER_SINK: must be one of elasticsearch, opensearch (got "solr")');
  });

  it("at a service's start, a bad connection setting is one JSON line naming the variable and exit 78", () => {
    const lines: string[] = [];
    const exit = (code: number): never => {
      throw new Error(`exit ${code}`);
    };
    expect(() => sinkSettingOrExit("drainer", { ELASTICSEARCH_URL: "https://es:9200", ELASTICSEARCH_API_KEY: "id:s3cret-key", ELASTICSEARCH_PASSWORD: "s3cret-pw", ELASTICSEARCH_USERNAME: "u" }, { write: (l) => lines.push(l), exit })).toThrow("exit 78");
    const line = JSON.parse(lines[0]!) as Record<string, unknown>;
    expect(line).toMatchObject({ level: 60, service: "drainer", exitCode: 78, msg: "invalid configuration: ELASTICSEARCH_USERNAME and ELASTICSEARCH_API_KEY" });
    expect(line.invalidEnv).toEqual({ "ELASTICSEARCH_USERNAME and ELASTICSEARCH_API_KEY": "two kinds of credentials: give one (basic auth, an API key, a bearer token or SigV4)" });
    expect(lines[0]).not.toMatch(/s3cret/);
  });
});
