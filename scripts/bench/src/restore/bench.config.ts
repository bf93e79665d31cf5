// The restore benchmark's config: what its drainer daemon loads (TETHER_CONFIG). The annotation
// rows of the benchmarks, synced as plainAnnotations (no embed), to the engine TETHER_SINK picks.
import { defineConfig } from "@tether/core";
import { annotationMigrations } from "@tether/annotations";
import { elasticsearch } from "@tether/elasticsearch";
import { opensearch } from "@tether/opensearch";
import { plainAnnotations } from "../plain-annotations.js";

export default defineConfig({
  collections: [plainAnnotations],
  migrations: [annotationMigrations],
  sink: process.env.TETHER_SINK === "opensearch" ? opensearch() : elasticsearch(),
});
