import { defineCollection, type Collection } from "@tether/core";
import { annotations, type AnnotationRow } from "@tether/annotations";

/**
 * The annotation collection as it was before annotation documents embedded their author: one
 * row per document (no `load`, no embeds), the same table, index, mapping and documents (an
 * author without an annotation_user row is what every benchmark's seeded author is). The
 * benchmarks of the engine (queue, reindex, verify, rebuild, write, enqueue, claim, backlog,
 * capture, events) run on it, so their figures stay comparable with the ones measured before;
 * `authors` measures what the author embed costs the drain and the write path, and `api` /
 * `load` measure the reference service as it runs.
 */
export const plainAnnotations: Collection<AnnotationRow> = defineCollection<AnnotationRow>({
  name: annotations.name,
  table: annotations.table,
  idType: annotations.idType,
  index: annotations.index,
  deletedColumn: annotations.deletedColumn,
  toDocument: (row) => annotations.toDocument(row),
  mappings: annotations.mappings,
  reindexScopes: annotations.reindexScopes,
});
