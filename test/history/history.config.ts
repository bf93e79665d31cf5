// The history tester's config: what its spawned `tether` verbs and drainer daemons load
// (TETHER_CONFIG). TETHER_SINK picks the engine, as in the repository's own tether.config.ts.
import { defineConfig } from "@tether/core";
import { elasticsearch } from "@tether/elasticsearch";
import { opensearch } from "@tether/opensearch";
import { shopMigrations, shopProducts } from "../support/shop.ts";
import { historyCollections, historyMigrations } from "./history-domain.ts";

export default defineConfig({
  collections: [...Object.values(historyCollections), shopProducts],
  migrations: [historyMigrations, shopMigrations],
  sink: process.env.TETHER_SINK === "opensearch" ? opensearch() : elasticsearch(),
  // One document per fan-out chunk, so a fan-out of a history's few products takes several.
  options: { drainer: { deadlineMs: 5_000, fanoutChunkSize: 1 } },
});
