import { defineConfig } from "@tether/core";
import { elasticsearch } from "@tether/elasticsearch";
import { productMigrations, products } from "./products.ts";

export default defineConfig({
  collections: [products],
  migrations: [productMigrations],
  sink: elasticsearch(),
  options: { writer: { graceMs: 0 } },
});
