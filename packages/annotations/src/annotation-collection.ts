import { defineCollection, type Collection, type EmbeddedTable } from "@tether/core";
import type { AnnotationDocumentRow, AnnotationUserInsert, AnnotationUserRow, AnnotationUserUpdate } from "./annotation-row.js";
import { annotationDocumentsQuery } from "./annotation-store.js";

/**
 * The annotation collection's type: row-typed (`defineCollection<Row>`), with its embedded
 * table named so that `annotations.embeds.author` takes `annotation_user`'s values in the
 * writer's verbs.
 */
export type AnnotationCollection = Collection<
  AnnotationDocumentRow,
  Record<string, unknown>,
  Record<string, unknown>,
  any,
  { readonly author: EmbeddedTable<AnnotationUserRow, AnnotationUserInsert, AnnotationUserUpdate> }
>;

/**
 * The annotation collection, declared once and handed to the API's write path, the drainer
 * and the CLI. Its documents embed their author's display name and hidden flag: renaming,
 * hiding or deleting a user (through the writer's verbs on `annotations.embeds.author`, or by
 * plain SQL with capture on) re-syncs every annotation of that user, expanded by the drainer.
 *
 * @example
 * await writer.updateWithJob(db, annotations.embeds.author, "acct:ann@example.com", { hidden: true });
 */
export const annotations = defineCollection<AnnotationDocumentRow>({
  name: "annotation",
  table: "annotation",
  idType: "bigint",
  index: "annotations",
  deletedColumn: "deleted_at",
  // One SELECT over a relation of rows: the writer runs it inside each write's statement, so an
  // annotation write costs one round trip although its document reads annotation_user.
  loadQuery: (db, rows) => annotationDocumentsQuery(db, rows),
  toDocument: (r) => ({
    user: r.userid,
    group: r.groupid,
    uri: r.target_uri,
    text: r.text,
    tags: r.tags,
    created: r.created.toISOString(),
    updated: r.updated.toISOString(),
    // The author's, when the author has an annotation_user row; without one the document is the
    // one annotations had before authors existed (searches treat a missing flag as not hidden).
    ...(r.user_hidden === null || r.user_hidden === undefined ? {} : { user_display_name: r.user_display_name ?? null, user_hidden: r.user_hidden }),
  }),
  mappings: {
    properties: {
      user: { type: "keyword" },
      group: { type: "keyword" },
      uri: { type: "keyword" },
      text: { type: "text", analyzer: "standard" },
      tags: { type: "keyword" },
      created: { type: "date" },
      updated: { type: "date" },
      user_display_name: { type: "text" },
      user_hidden: { type: "boolean" },
    },
  },
  reindexScopes: {
    user: { kind: "equals", column: "userid", description: "all annotations of one user" },
    group: { kind: "equals", column: "groupid", description: "all annotations of one group" },
    updated: { kind: "range", column: "updated", description: "last-updated time; from inclusive, to exclusive" },
    created: { kind: "range", column: "created", description: "creation time; from inclusive, to exclusive" },
    ids: { kind: "ids", description: "a list of annotation ids" },
  },
  embeds: {
    // annotation_user.userid = annotation.userid: a fan-out (one user, many annotations), its
    // jobs tagged fanout:user.<insert|update|delete>.
    author: { table: "annotation_user", on: { userid: "userid" }, primaryKey: "userid", columns: ["display_name", "hidden"], tag: "user" },
  },
}) as AnnotationCollection;
