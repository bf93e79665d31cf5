// The reference annotation service's Tether config, loaded by `pnpm tether`, the drainer and the
// API's admin routes when run from this checkout. ELASTICSEARCH_URL and TETHER_INDEX_PREFIX
// come from each process's environment.
import { defineConfig } from "@tether/core";
import { annotationMigrations, annotations } from "@tether/annotations";
import { elasticsearch } from "@tether/elasticsearch";

export default defineConfig({
  collections: [annotations],
  migrations: [annotationMigrations],
  sink: elasticsearch(),
});
