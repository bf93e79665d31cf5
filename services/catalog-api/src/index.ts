/** @tether/catalog-api — a product catalog built on Tether's public packages only. */
export { buildApp, type BuildAppOptions } from "./app.js";
export type { CatalogDB, ProductDocumentRow } from "./catalog-db.js";
export { catalogMigrations } from "./catalog-migrations.js";
export { loadEnv, type CatalogEnv } from "./env.js";
export { productChange, products } from "./product-collection.js";
