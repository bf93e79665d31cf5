import { defineConfig } from "@tether/core";
import { elasticsearch } from "@tether/elasticsearch";
import { productMigrations, products } from "./src/products-collection.ts";

export default defineConfig({
  collections: [products],
  migrations: [productMigrations],
  sink: elasticsearch(), // ELASTICSEARCH_URL, else http://127.0.0.1:9200
  options: { alerts: { queueLengthHigh: 5000 } },
});
