import { createDb, finishRebuild, rebuildIndex, rollbackRebuild, sinkFromConfig } from "@tether/core";
import config from "../tether.config.ts";
import { products } from "./products-collection.ts";

const db = createDb({ connectionString: process.env.DATABASE_URL! });
const sink = sinkFromConfig(config, process.env); // ELASTICSEARCH_URL, TETHER_INDEX_PREFIX

// products' mapping changed in its collection: build the new index while writes go on.
export async function shipMappingChange() {
  const r = await rebuildIndex(db, sink, products, {
    onProgress: (p) => console.error(`${p.phase} ${p.done}/${p.total}`),
  });
  console.log(`${r.alias} now serves ${r.index}; ${r.previous} kept for a rollback`);
}

// Later: keep the new index (drop the old one), or go back to the old one.
export const keep = () => finishRebuild(db, sink, products);
export const goBack = () => rollbackRebuild(db, sink, products);
