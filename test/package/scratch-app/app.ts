// The scratch application: one write through the writer, one drain, the document read back.
// Run with plain `node app.ts` (Node's type stripping): erasable TypeScript only.
import { createDb, createWriter, Drainer } from "@tether/core";
import config from "./tether.config.ts";
import { products } from "./products.ts";

const db = createDb({ connectionString: process.env.DATABASE_URL ?? "" });
const sink = config.sink({ url: process.env.ELASTICSEARCH_URL, indexPrefix: process.env.TETHER_INDEX_PREFIX });
try {
  const writer = createWriter({ ...config.options?.writer });
  // No direct sync: the drain below must be what puts the document in Elasticsearch.
  const { row } = await writer.createWithJob(db, products, { name: "Teapot", price_cents: 2450 }, { directSync: false });
  await sink.ensureIndex(products.index, products.mappings);
  const drained = await new Drainer({ db, sink, collections: config.collections }).drainOnce();
  const id = String(row?.id);
  const state = (await sink.fetchStates(products.index, [id])).get(id);
  process.stdout.write(`${JSON.stringify({ id, version: row?.version, drained, state })}\n`);
} finally {
  await db.destroy();
  await sink.close?.();
}
