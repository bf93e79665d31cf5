import { createDb, createWriter } from "@tether/core";
import config from "../tether.config.ts";
import { products } from "./products-collection.ts";

const db = createDb({ connectionString: process.env.DATABASE_URL! });
const sink = config.sink({ url: process.env.ELASTICSEARCH_URL });
const writer = createWriter({ sink }); // direct sync right after COMMIT, 500 ms at most

// In your POST /products handler: the row and its job commit together.
export async function createProduct(input: { name: string; priceCents: number }) {
  const { row } = await writer.createWithJob(db, products, { name: input.name, price_cents: input.priceCents });
  return row;
}
