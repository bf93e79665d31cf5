import { OpenSearchSink } from "@tether/opensearch";
import { describeSinkConformance, dropIndices, providedEngineUrl } from "@tether/testkit";

const url = providedEngineUrl("opensearch");

describeSinkConformance("OpenSearchSink", {
  url,
  create: (u, indexPrefix) => new OpenSearchSink({ client: u, indexPrefix }),
  dropIndices: (prefix) => dropIndices(url, prefix),
});
