// The reference annotation service's Tether config, loaded by `pnpm tether`, the drainer and the
// API's admin console when run from this checkout. TETHER_SINK picks the downstream
// (elasticsearch, the default, or opensearch); the node URL (ELASTICSEARCH_URL or OPENSEARCH_URL)
// and TETHER_INDEX_PREFIX come from each process's environment.
import { defineConfig } from "@tether/core";
import { annotationMigrations, annotations } from "@tether/annotations";
import { elasticsearch } from "@tether/elasticsearch";
import { opensearch } from "@tether/opensearch";

export default defineConfig({
  collections: [annotations],
  migrations: [annotationMigrations],
  sink: process.env.TETHER_SINK === "opensearch" ? opensearch() : elasticsearch(),
});
