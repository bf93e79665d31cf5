import { createDb, sinkFromConfig, writerFromConfig } from "@tether/core";
import config from "../tether.config.ts";
import { products } from "./products-collection.ts";

const db = createDb({ connectionString: process.env.DATABASE_URL! });
// Built as the CLI and the drainer build theirs: ELASTICSEARCH_URL and TETHER_INDEX_PREFIX from
// this process's environment, the writer's options from the config's options.writer.
const sink = sinkFromConfig(config, process.env);
const writer = writerFromConfig(config, { sink }); // direct sync right after COMMIT, 500 ms at most

// In your POST /products handler: the row and its job commit together.
export async function createProduct(input: { name: string; priceCents: number }) {
  const { row } = await writer.createWithJob(db, products, { name: input.name, price_cents: input.priceCents });
  return row;
}
