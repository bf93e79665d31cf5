/** @tether/annotations — the reference service's domain: table, collection, row type. */
export * from "./annotation-collection.js";
export * from "./annotation-migrations.js";
export type { AnnotationRow } from "./annotation-row.js";
export * from "./annotation-store.js";
