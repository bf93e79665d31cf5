// The catalog service's Tether config: `pnpm tether --config services/catalog-api/catalog.config.ts …`,
// the drainer (TETHER_CONFIG=services/catalog-api/catalog.config.ts) and the API itself load it.
// TETHER_SINK picks the downstream (elasticsearch, the default, or opensearch); the node URL
// (ELASTICSEARCH_URL or OPENSEARCH_URL) and TETHER_INDEX_PREFIX come from each process's environment.
import { defineConfig } from "@tether/core";
import { elasticsearch } from "@tether/elasticsearch";
import { opensearch } from "@tether/opensearch";
import { catalogMigrations } from "./src/catalog-migrations.ts";
import { products } from "./src/product-collection.ts";

export default defineConfig({
  collections: [products],
  migrations: [catalogMigrations],
  sink: process.env.TETHER_SINK === "opensearch" ? opensearch() : elasticsearch(),
});
