import type { Kysely, QueryCreator, SelectQueryBuilder } from "kysely";
import { documentLinkColumns, fanoutJobName, resolveEmbeds, type EmbeddedTable, type EmbedOptions, type EmbedOwner } from "./embedded-table.js";
import { ENTITY_ID_TYPES, type EntityIdType } from "./entity-id.js";
import { ValidationError } from "./errors.js";
import { sqlIdentifier as ident } from "./sql-identifier.js";
import { loadThroughQuery } from "./store/load-query-store.js";

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
  /**
   * `load` as one SELECT over a relation of the table's rows, named `rows` (it has every column of
   * the table): declare it instead of `load`. Core runs it over a batch of ids wherever `load`
   * would run (the drainer, verify, the trace), and over the row a write's own statement returns,
   * in that statement (`WITH rows AS (INSERT … RETURNING *) SELECT …`): a write whose document
   * reads other tables then costs the round trips of one whose document does not. Its rows must
   * carry the table's id column unchanged. In a write's statement the table itself still shows
   * the rows as they were before the write: read the written row from `rows`, not from the table.
   *
   * @example
   * loadQuery: (db, rows) => db.selectFrom(`${rows} as a`).leftJoin("author as u", "u.id", "a.author_id")
   *   .selectAll("a").select(["u.name as author_name"]),
   */
  loadQuery?: LoadQuery;
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
  /**
   * The other tables the documents read (see embedded-table.ts): a change to any of them, through
   * the writer or plain SQL with capture on, re-syncs every document that embeds the changed row.
   * Needs `load` (which reads them). Default: none.
   *
   * @example
   * embeds: {
   *   category: { table: "category", on: { id: "category_id" }, columns: ["name"] }, // category.id = product.category_id
   *   stock: { table: "stock", on: { product_id: "id" }, primaryKey: "product_id", columns: ["quantity"] },
   * }
   */
  embeds?: Readonly<Record<string, EmbedOptions>>;
}

/** A collection's documents as one SELECT over the relation `rows` names (see `CollectionOptions.loadQuery`). */
export type LoadQuery = (db: QueryCreator<any>, rows: string) => SelectQueryBuilder<any, any, any>;

/**
 * A validated collection with every default filled. `Insert`, `Update` and `DB` are type-level
 * only (see `TypedCollection`): what the writer accepts for it and the database it lives in.
 */
export interface Collection<
  Row = Record<string, unknown>,
  Insert = Record<string, unknown>,
  Update = Record<string, unknown>,
  DB = any,
  Embeds extends Readonly<Record<string, EmbeddedTable<any, any, any, any>>> = Readonly<Record<string, EmbeddedTable>>,
> extends EmbedOwner {
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
  /**
   * Columns the document uses, when declared (with the columns its embeds' links meet, such as a
   * product's category_id); undefined means every column counts.
   */
  readonly captureColumns: readonly string[] | undefined;
  /** The other tables the documents read, by name (`products.embeds.category`); empty when none. */
  readonly embeds: Embeds;
  /** Job name of the collection's fan-out jobs (`fanout_<name>`), or undefined when no embed fans out. */
  readonly fanoutJobName: string | undefined;
  /**
   * The embed of that name; throws a ValidationError naming the ones declared when there is none.
   * @example
   * await writer.updateWithJob(db, products.embed("category"), categoryId, { name: "Footwear" });
   */
  embed(name: string): EmbeddedTable;
  toDocument(row: Row): Record<string, unknown>;
  /** The batch loader of the rows `toDocument` receives, when the collection declares one. */
  readonly load: ((db: Kysely<any>, ids: readonly string[]) => Promise<readonly Row[]>) | undefined;
  /** The loader as one SELECT (`load` runs it), when the collection declares it so: the writer folds it into its statement. */
  readonly loadQuery: LoadQuery | undefined;
  /** True when the row is soft-deleted. */
  isDeleted(row: Row): boolean;
  /** Never set at run time: carries the writer's value types for the compiler. */
  readonly types?: { insert: Insert; update: Update; db: DB };
}

function checkCaptureColumns(columns: readonly string[]): readonly string[] {
  if (!Array.isArray(columns) || columns.length === 0) throw new ValidationError("collection.captureColumns", "must be a non-empty array of column names");
  return columns.map((c, i) => ident(`collection.captureColumns[${i}]`, c));
}

/** Validates a declaration and fills its defaults (`defineCollection` is the public way in). */
export function buildCollection<Row>(opts: CollectionOptions<Row>): Collection<Row> {
  if (!opts.name || !/^[a-z][a-z0-9_]*$/.test(opts.name)) throw new ValidationError("collection.name", "must match /^[a-z][a-z0-9_]*$/");
  if (!opts.index || !/^[a-z0-9][a-z0-9_.-]*$/.test(opts.index)) throw new ValidationError("collection.index", "must be a lower-case index name");
  if (typeof opts.toDocument !== "function") throw new ValidationError("collection.toDocument", "must be a function");
  if (opts.load !== undefined && typeof opts.load !== "function") throw new ValidationError("collection.load", "must be a function");
  if (opts.loadQuery !== undefined && typeof opts.loadQuery !== "function") throw new ValidationError("collection.loadQuery", "must be a function");
  // One definition of a document's rows: a load beside a loadQuery could disagree with it.
  if (opts.load !== undefined && opts.loadQuery !== undefined) throw new ValidationError("collection.loadQuery", "declare load or loadQuery, not both (load is derived from loadQuery)");
  if (opts.idType !== undefined && !ENTITY_ID_TYPES.includes(opts.idType)) throw new ValidationError("collection.idType", `must be one of ${ENTITY_ID_TYPES.join(", ")}`);
  const deletedColumn = opts.deletedColumn === undefined ? undefined : ident("collection.deletedColumn", opts.deletedColumn);
  const scopes: Record<string, ReindexScope> = {};
  for (const [key, scope] of Object.entries(opts.reindexScopes ?? {})) {
    if (!/^[a-z][a-z0-9_]*$/.test(key)) throw new ValidationError(`collection.reindexScopes.${key}`, "scope names are lower-case words");
    if (scope.kind !== "ids") ident(`collection.reindexScopes.${key}.column`, scope.column);
    scopes[key] = scope;
  }
  const table = ident("collection.table", opts.table);
  const idColumn = ident("collection.idColumn", opts.idColumn ?? "id");
  const jobName = opts.jobName ?? `sync_${opts.name}`;
  if (jobName.startsWith("fanout_")) throw new ValidationError("collection.jobName", 'job names starting with "fanout_" are reserved for fan-out jobs');
  const collection = {
    name: opts.name,
    table,
    idColumn,
    idType: opts.idType,
    versionColumn: ident("collection.versionColumn", opts.versionColumn ?? "version"),
    deletedColumn,
    index: opts.index,
    jobName,
    mappings: opts.mappings,
    reindexScopes: scopes,
    captureColumns: undefined as readonly string[] | undefined,
    embeds: {} as Readonly<Record<string, EmbeddedTable>>,
    fanoutJobName: undefined as string | undefined,
    embed(name: string): EmbeddedTable {
      const e = collection.embeds[name];
      if (!e) throw new ValidationError("embed", `collection "${opts.name}" embeds no table named "${name}" (embeds: ${Object.keys(collection.embeds).join(", ") || "none"})`);
      return e;
    },
    toDocument: opts.toDocument,
    load: opts.loadQuery ? loadThroughQuery(table, idColumn, opts.loadQuery) : opts.load,
    loadQuery: opts.loadQuery,
    isDeleted(row: Row): boolean {
      if (!deletedColumn) return false;
      const v = (row as Record<string, unknown>)[deletedColumn];
      return v !== null && v !== undefined && v !== false;
    },
  };
  // Each embed refers back to its collection: resolved once the collection exists.
  const embeds = resolveEmbeds(collection, opts.embeds);
  if (Object.keys(embeds).length > 0 && opts.load === undefined && opts.loadQuery === undefined) {
    throw new ValidationError("collection.load", "a collection with embeds needs a load (or a loadQuery) that reads them (one query per batch of ids): toDocument only sees what load returns");
  }
  collection.embeds = embeds;
  collection.fanoutJobName = Object.values(embeds).some((e) => !e.direct) ? fanoutJobName(opts.name) : undefined;
  // The document's own link columns (a product's category_id) are part of its document.
  collection.captureColumns =
    opts.captureColumns === undefined ? undefined : Object.freeze([...new Set([...checkCaptureColumns(opts.captureColumns), ...documentLinkColumns(embeds)])]);
  return collection;
}
