import { createDb, createWriter } from "@tether/core";
import { elasticsearch } from "@tether/elasticsearch";
import { products } from "./shop-embeds.ts";

const db = createDb({ connectionString: process.env.DATABASE_URL! });
const writer = createWriter({ sink: elasticsearch()({ url: process.env.ELASTICSEARCH_URL }) });

// A rename: the category row, plus one fan-out job, in one short transaction, however many
// products the category holds. A drainer bumps and rewrites each of them afterwards.
export async function renameCategory(id: string, name: string) {
  const { fanouts } = await writer.updateWithJob(db, products.embeds.category, id, { name });
  return { fanouts };
}

// A stock change reaches one product: it is bumped in this transaction and synced right after COMMIT.
export async function setStock(productId: string, quantity: number) {
  const { changes, sync } = await writer.updateWithJob(db, products.embeds.stock, productId, { quantity });
  return { products: changes.map((c) => c.id), sync };
}
