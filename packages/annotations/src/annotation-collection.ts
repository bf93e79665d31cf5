import { defineCollection, type Collection } from "@tether/core";
import type { AnnotationRow } from "./annotation-row.js";

/**
 * The annotation collection, declared once and handed to the API's write path, the drainer
 * and the CLI.
 */
export const annotations: Collection<AnnotationRow> = defineCollection<AnnotationRow>({
  name: "annotation",
  table: "annotation",
  idType: "bigint",
  index: "annotations",
  deletedColumn: "deleted_at",
  toDocument: (r) => ({
    user: r.userid,
    group: r.groupid,
    uri: r.target_uri,
    text: r.text,
    tags: r.tags,
    created: r.created.toISOString(),
    updated: r.updated.toISOString(),
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
    },
  },
  reindexScopes: {
    user: { kind: "equals", column: "userid", description: "all annotations of one user" },
    group: { kind: "equals", column: "groupid", description: "all annotations of one group" },
    updated: { kind: "range", column: "updated", description: "last-updated time; from inclusive, to exclusive" },
    created: { kind: "range", column: "created", description: "creation time; from inclusive, to exclusive" },
    ids: { kind: "ids", description: "a list of annotation ids" },
  },
});
