import { ElasticsearchSink } from "@tether/elasticsearch";
import { describeSinkConformance, dropIndices, providedEngineUrl } from "@tether/testkit";

const url = providedEngineUrl("elasticsearch");

describeSinkConformance("ElasticsearchSink", {
  url,
  create: (u, indexPrefix) => new ElasticsearchSink({ client: u, indexPrefix }),
  dropIndices: (prefix) => dropIndices(url, prefix),
});
