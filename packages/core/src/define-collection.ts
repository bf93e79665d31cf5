import type { Selectable } from "kysely";
import { buildCollection, type Collection, type CollectionOptions, type LoadQuery } from "./collection.js";
import type { EmbedOptions } from "./embedded-table.js";
import type { TypedCollection, TypedCollectionOptions, TypedEmbed } from "./typed-collection.js";

/**
 * Declares a synced entity type once; hand the result to both the write path and the drainer.
 *
 * Typed over your Kysely database interface (table and column names checked by the compiler,
 * the writer's values `Insertable`, rows `Selectable`):
 *
 * @example
 * interface DB { product: { id: Generated<string>; name: string; version: Generated<string> } }
 * const products = defineCollection<DB>()({
 *   table: "product", id: "id", version: "version", index: "products",
 *   toDocument: (row) => ({ name: row.name }),
 * });
 *
 * A document assembled from several tables: `load` reads a batch of rows in one query (with
 * their joins), and `embeds` names the other tables it reads, so that a change to any of them
 * re-syncs every document that embeds the changed row.
 *
 * @example
 * const products = defineCollection<DB>()({
 *   table: "product", id: "id", version: "version", index: "products",
 *   load: (db, ids) => loadProductsWithCategory(db, ids), // one JOIN per batch
 *   toDocument: (row) => ({ name: row.name, category: row.category_name }),
 *   embeds: { category: { table: "category", on: { id: "category_id" }, columns: ["name"] } },
 * });
 *
 * Or over a row type only, with column names as plain strings:
 *
 * @example
 * const annotations = defineCollection<AnnotationRow>({
 *   name: "annotation", table: "annotation", index: "annotations", deletedColumn: "deleted_at",
 *   toDocument: (r) => ({ user: r.userid, group: r.groupid, uri: r.target_uri, text: r.text }),
 *   reindexScopes: { user: { kind: "equals", column: "userid" }, ids: { kind: "ids" } },
 * });
 */
export function defineCollection<DB>(): <
  T extends keyof DB & string,
  R extends Selectable<DB[T]> = Selectable<DB[T]>,
  const D extends Record<string, TypedEmbed<DB>> = Record<never, never>,
>(
  opts: TypedCollectionOptions<DB, T, R, D>,
) => TypedCollection<DB, T, R, D>;
export function defineCollection<Row = Record<string, unknown>>(opts: CollectionOptions<Row>): Collection<Row>;
export function defineCollection(opts?: CollectionOptions<any>): unknown {
  if (opts === undefined) {
    return (typed: TypedCollectionOptions<any, string, any, Record<string, TypedEmbed<any>>>) =>
      buildCollection({
        name: typed.name ?? typed.table.slice(typed.table.lastIndexOf(".") + 1),
        table: typed.table,
        idColumn: typed.id,
        versionColumn: typed.version,
        ...(typed.deleted !== undefined ? { deletedColumn: typed.deleted } : {}),
        index: typed.index,
        toDocument: typed.toDocument,
        ...(typed.load !== undefined ? { load: typed.load } : {}),
        ...(typed.loadQuery !== undefined ? { loadQuery: typed.loadQuery as LoadQuery } : {}),
        ...(typed.mappings !== undefined ? { mappings: typed.mappings } : {}),
        ...(typed.jobName !== undefined ? { jobName: typed.jobName } : {}),
        ...(typed.reindexScopes !== undefined ? { reindexScopes: typed.reindexScopes } : {}),
        ...(typed.captureColumns !== undefined ? { captureColumns: typed.captureColumns } : {}),
        ...(typed.embeds !== undefined ? { embeds: typed.embeds as Record<string, EmbedOptions> } : {}),
      });
  }
  return buildCollection(opts);
}
