import type { Kysely, Selectable } from "kysely";
import { ENTITY_ID_TYPES, type EntityIdType } from "./entity-id.js";
import { ValidationError } from "./errors.js";
import type { TypedCollection, TypedCollectionOptions } from "./typed-collection.js";

/**
 * A named re-index scope: how an admin filter maps onto the source table.
 * - `equals`: one value compared to `column` (e.g. by user).
 * - `range`: `{from?, to?}` on a timestamp column; `from` inclusive, `to` exclusive.
 * - `ids`: a list of ids.
 */
export type ReindexScope =
  | { kind: "equals"; column: string; description?: string }
  | { kind: "range"; column: string; description?: string }
  | { kind: "ids"; description?: string };

export interface CollectionOptions<Row = Record<string, unknown>> {
  /** Logical name, e.g. "annotation". */
  name: string;
  /** Source table, optionally schema-qualified. */
  table: string;
  /** Primary key column. Default "id". Anti-entropy needs integer ids. */
  idColumn?: string;
  /**
   * Type of the id column; every id the API, re-index and drainer accept follows its rule
   * (`canonicalEntityId`). Default: read from the catalog the first time it is needed.
   */
  idType?: EntityIdType;
  /** Monotonic version column, bumped in every writing transaction. Default "version". */
  versionColumn?: string;
  /**
   * Soft-delete marker column: a row whose value is not null/false is deleted and is
   * tombstoned downstream. Omit when the collection only hard-deletes.
   */
  deletedColumn?: string;
  /** Downstream index name (the sink may prefix it). */
  index: string;
  /** Builds the downstream document from a live row. Must be pure and deterministic. */
  toDocument: (row: Row) => Record<string, unknown>;
  /**
   * Loads the rows `toDocument` receives, for a batch of ids, in one query: for a document
   * assembled from a join (the row with its category's name, its stock). Every row it returns
   * must carry the table's id, version and soft-delete columns; an id it does not return is a
   * row that does not exist. The drainer, the writer's direct sync (in the write's own
   * transaction) and the console's trace read rows through it. Default: `SELECT *` of the table.
   */
  load?: (db: Kysely<any>, ids: readonly string[]) => Promise<readonly Row[]>;
  /** Field mappings for the downstream index. */
  mappings?: Record<string, unknown>;
  /** Job name dispatching to this collection. Default `sync_<name>`. */
  jobName?: string;
  /** Named admin re-index scopes, e.g. `{ user: { kind: "equals", column: "userid" } }`. */
  reindexScopes?: Record<string, ReindexScope>;
  /**
   * Columns `toDocument` reads. Optional; used by the capture trigger (see `enableCapture`) so
   * an UPDATE that changes none of them (nor the soft-delete column) neither bumps the version
   * nor enqueues a job. Default: every column counts.
   */
  captureColumns?: readonly string[];
}

/**
 * A validated collection with every default filled. `Insert`, `Update` and `DB` are type-level
 * only (see `TypedCollection`): what the writer accepts for it and the database it lives in.
 */
export interface Collection<Row = Record<string, unknown>, Insert = Record<string, unknown>, Update = Record<string, unknown>, DB = any> {
  readonly name: string;
  readonly table: string;
  readonly idColumn: string;
  readonly idType: EntityIdType | undefined;
  readonly versionColumn: string;
  readonly deletedColumn: string | undefined;
  readonly index: string;
  readonly jobName: string;
  readonly mappings: Record<string, unknown> | undefined;
  readonly reindexScopes: Readonly<Record<string, ReindexScope>>;
  /** Columns the document uses, when declared; undefined means every column counts. */
  readonly captureColumns: readonly string[] | undefined;
  toDocument(row: Row): Record<string, unknown>;
  /** The batch loader of the rows `toDocument` receives, when the collection declares one. */
  readonly load: ((db: Kysely<any>, ids: readonly string[]) => Promise<readonly Row[]>) | undefined;
  /** True when the row is soft-deleted. */
  isDeleted(row: Row): boolean;
  /** Never set at run time: carries the writer's value types for the compiler. */
  readonly types?: { insert: Insert; update: Update; db: DB };
}

const IDENT = /^[a-z_][a-z0-9_]*(\.[a-z_][a-z0-9_]*)?$/;

function ident(field: string, value: string): string {
  if (!IDENT.test(value)) throw new ValidationError(field, `"${value}" is not a plain lower-case SQL identifier`);
  return value;
}

function checkCaptureColumns(columns: readonly string[]): readonly string[] {
  if (!Array.isArray(columns) || columns.length === 0) throw new ValidationError("collection.captureColumns", "must be a non-empty array of column names");
  return Object.freeze(columns.map((c, i) => ident(`collection.captureColumns[${i}]`, c)));
}

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
 * A document assembled from a join: `load` reads a batch of rows in one query, and
 * `toDocument` receives what it returns.
 *
 * @example
 * const products = defineCollection<DB>()({
 *   table: "product", id: "id", version: "version", index: "products",
 *   load: (db, ids) => loadProductsWithCategory(db, ids), // one JOIN per batch
 *   toDocument: (row) => ({ name: row.name, category: row.category_name }),
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
export function defineCollection<DB>(): <T extends keyof DB & string, R extends Selectable<DB[T]> = Selectable<DB[T]>>(
  opts: TypedCollectionOptions<DB, T, R>,
) => TypedCollection<DB, T, R>;
export function defineCollection<Row = Record<string, unknown>>(opts: CollectionOptions<Row>): Collection<Row>;
export function defineCollection(opts?: CollectionOptions<any>): unknown {
  if (opts === undefined) {
    return (typed: TypedCollectionOptions<any, string>) =>
      buildCollection({
        name: typed.name ?? typed.table.slice(typed.table.lastIndexOf(".") + 1),
        table: typed.table,
        idColumn: typed.id,
        versionColumn: typed.version,
        ...(typed.deleted !== undefined ? { deletedColumn: typed.deleted } : {}),
        index: typed.index,
        toDocument: typed.toDocument,
        ...(typed.load !== undefined ? { load: typed.load } : {}),
        ...(typed.mappings !== undefined ? { mappings: typed.mappings } : {}),
        ...(typed.jobName !== undefined ? { jobName: typed.jobName } : {}),
        ...(typed.reindexScopes !== undefined ? { reindexScopes: typed.reindexScopes } : {}),
      });
  }
  return buildCollection(opts);
}

function buildCollection<Row>(opts: CollectionOptions<Row>): Collection<Row> {
  if (!opts.name || !/^[a-z][a-z0-9_]*$/.test(opts.name)) throw new ValidationError("collection.name", "must match /^[a-z][a-z0-9_]*$/");
  if (!opts.index || !/^[a-z0-9][a-z0-9_.-]*$/.test(opts.index)) throw new ValidationError("collection.index", "must be a lower-case index name");
  if (typeof opts.toDocument !== "function") throw new ValidationError("collection.toDocument", "must be a function");
  if (opts.load !== undefined && typeof opts.load !== "function") throw new ValidationError("collection.load", "must be a function");
  if (opts.idType !== undefined && !ENTITY_ID_TYPES.includes(opts.idType)) throw new ValidationError("collection.idType", `must be one of ${ENTITY_ID_TYPES.join(", ")}`);
  const deletedColumn = opts.deletedColumn === undefined ? undefined : ident("collection.deletedColumn", opts.deletedColumn);
  const scopes: Record<string, ReindexScope> = {};
  for (const [key, scope] of Object.entries(opts.reindexScopes ?? {})) {
    if (!/^[a-z][a-z0-9_]*$/.test(key)) throw new ValidationError(`collection.reindexScopes.${key}`, "scope names are lower-case words");
    if (scope.kind !== "ids") ident(`collection.reindexScopes.${key}.column`, scope.column);
    scopes[key] = scope;
  }
  const captureColumns = opts.captureColumns === undefined ? undefined : checkCaptureColumns(opts.captureColumns);
  return {
    name: opts.name,
    table: ident("collection.table", opts.table),
    idColumn: ident("collection.idColumn", opts.idColumn ?? "id"),
    idType: opts.idType,
    versionColumn: ident("collection.versionColumn", opts.versionColumn ?? "version"),
    deletedColumn,
    index: opts.index,
    jobName: opts.jobName ?? `sync_${opts.name}`,
    mappings: opts.mappings,
    reindexScopes: scopes,
    captureColumns,
    toDocument: opts.toDocument,
    load: opts.load,
    isDeleted(row: Row): boolean {
      if (!deletedColumn) return false;
      const v = (row as Record<string, unknown>)[deletedColumn];
      return v !== null && v !== undefined && v !== false;
    },
  };
}
