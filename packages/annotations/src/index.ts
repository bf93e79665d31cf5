/** @tether/annotations — the reference service's domain: tables, collection, row types. */
export * from "./annotation-collection.js";
export * from "./annotation-migrations.js";
export type { AnnotationDocumentRow, AnnotationRow, AnnotationUserInsert, AnnotationUserRow, AnnotationUserUpdate } from "./annotation-row.js";
export * from "./annotation-store.js";
