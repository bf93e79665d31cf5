import type { Insertable, Kysely, QueryCreator, Selectable, SelectQueryBuilder, Updateable } from "kysely";
import type { Collection } from "./collection.js";
import type { EmbeddedTable } from "./embedded-table.js";

/** A column of table `T` in the application's Kysely database interface `DB`. */
export type ColumnOf<DB, T extends keyof DB> = keyof DB[T] & string;

/** A re-index scope whose column the compiler checks against the table. */
export type TypedReindexScope<C extends string> =
  | { kind: "equals"; column: C; description?: string }
  | { kind: "range"; column: C; description?: string }
  | { kind: "ids"; description?: string };

/**
 * One embedded table declared against `DB`: the table must exist in `DB`, and the columns named
 * on its side (its link column, primary key, read columns) must be columns of it. The child's
 * column of the link is checked against the schema by `tether migrate` and `tether status`.
 */
export type TypedEmbed<DB> = {
  [E in keyof DB & string]: {
    /** The other table, a key of `DB`. */
    table: E;
    /** `{ <column of this table>: <column of its child> }`, exactly one entry. */
    on: Partial<Record<ColumnOf<DB, E>, string>>;
    /** The embed this table is reached through. Default: the document's table. */
    through?: string;
    /** This table's primary key. Default "id". */
    primaryKey?: ColumnOf<DB, E>;
    /** The columns documents read. Default: every column counts. */
    columns?: readonly ColumnOf<DB, E>[];
    /** Priority of the jobs a change enqueues. Default 10. */
    priority?: number;
    /** Delay before a fan-out job is due. Default 0. */
    delayMs?: number;
    /** Names the work in job tags (`fanout:<tag>.<op>`). Default: the embed's name. */
    tag?: string;
  };
}[keyof DB & string];

/** The resolved embeds of a typed collection, each typed over its own table. */
export type TypedEmbeds<DB, D extends Record<string, TypedEmbed<DB>>> = {
  readonly [K in keyof D]: D[K] extends { table: infer E extends keyof DB & string }
    ? EmbeddedTable<Selectable<DB[E]>, Insertable<DB[E]>, Updateable<DB[E]>, DB>
    : EmbeddedTable;
};

/**
 * A collection declared against the application's Kysely `DB` interface: the table, and every
 * column named here, must exist in `DB`, and `toDocument` receives the table's `Selectable` row.
 */
export interface TypedCollectionOptions<
  DB,
  T extends keyof DB & string,
  R extends Selectable<DB[T]> = Selectable<DB[T]>,
  D extends Record<string, TypedEmbed<DB>> = Record<never, never>,
> {
  /** The source table, a key of `DB`. */
  table: T;
  /** Logical name (job name `sync_<name>`, lanes, metrics). Default: the table without its schema. */
  name?: string;
  /** Primary key column. */
  id: ColumnOf<DB, T>;
  /** Monotonic version column, bumped in every writing transaction. */
  version: ColumnOf<DB, T>;
  /** Soft-delete marker column; omit when the table only hard-deletes. */
  deleted?: ColumnOf<DB, T>;
  /** Downstream index name (the sink may prefix it). */
  index: string;
  /**
   * Loads the rows `toDocument` receives for a batch of ids in one query (a document assembled
   * from a join): the table's row and whatever it joins. Default: the table's row.
   */
  load?: (db: Kysely<DB>, ids: readonly string[]) => Promise<readonly R[]>;
  /**
   * `load` as one SELECT over `rows` (the relation `tether_rows`, with the table's columns): declare
   * it instead of `load`, and a write's own statement returns the row through it (see
   * `CollectionOptions.loadQuery`).
   */
  loadQuery?: (db: QueryCreator<DB & Record<"tether_rows", DB[T]>>, rows: "tether_rows") => SelectQueryBuilder<any, any, R>;
  /** Builds the downstream document from a live row (what `load` returns). Pure and deterministic. */
  toDocument: (row: R) => Record<string, unknown>;
  /** Field mappings of the downstream index. */
  mappings?: Record<string, unknown>;
  /** Job name dispatching to this collection. Default `sync_<name>`. */
  jobName?: string;
  /** Named admin re-index scopes over the table's columns. */
  reindexScopes?: Record<string, TypedReindexScope<ColumnOf<DB, T>>>;
  /** Columns `toDocument` reads of the table itself, for the capture trigger. Default: every column counts. */
  captureColumns?: readonly ColumnOf<DB, T>[];
  /**
   * The other tables the documents read (they need `load`): a change to one re-syncs every
   * document that embeds the changed row. See `EmbedOptions`.
   */
  embeds?: D;
}

/**
 * A collection typed over table `T` of `DB`: the writer takes `Insertable<DB[T]>` values and
 * `Updateable<DB[T]>` patches, returns `Selectable<DB[T]>` rows (or what the collection's
 * `load` returns), and `writeWithJobs` hands its callback a `Transaction<DB>`. Its embeds are
 * typed over their own tables.
 */
export type TypedCollection<
  DB,
  T extends keyof DB & string,
  R extends Selectable<DB[T]> = Selectable<DB[T]>,
  D extends Record<string, TypedEmbed<DB>> = Record<never, never>,
> = Collection<R, Insertable<DB[T]>, Updateable<DB[T]>, DB, TypedEmbeds<DB, D>>;
