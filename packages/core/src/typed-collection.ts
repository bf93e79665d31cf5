import type { Insertable, Kysely, Selectable, Updateable } from "kysely";
import type { Collection } from "./collection.js";

/** A column of table `T` in the application's Kysely database interface `DB`. */
export type ColumnOf<DB, T extends keyof DB> = keyof DB[T] & string;

/** A re-index scope whose column the compiler checks against the table. */
export type TypedReindexScope<C extends string> =
  | { kind: "equals"; column: C; description?: string }
  | { kind: "range"; column: C; description?: string }
  | { kind: "ids"; description?: string };

/**
 * A collection declared against the application's Kysely `DB` interface: the table, and every
 * column named here, must exist in `DB`, and `toDocument` receives the table's `Selectable` row.
 */
export interface TypedCollectionOptions<DB, T extends keyof DB & string, R extends Selectable<DB[T]> = Selectable<DB[T]>> {
  /** The source table, a key of `DB`. */
  table: T;
  /** Logical name (job name `sync_<name>`, lanes, metrics). Default: the table without its schema. */
  name?: string;
  /** Primary key column. Anti-entropy (verify) needs integer ids. */
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
  /** Builds the downstream document from a live row (what `load` returns). Pure and deterministic. */
  toDocument: (row: R) => Record<string, unknown>;
  /** Field mappings of the downstream index. */
  mappings?: Record<string, unknown>;
  /** Job name dispatching to this collection. Default `sync_<name>`. */
  jobName?: string;
  /** Named admin re-index scopes over the table's columns. */
  reindexScopes?: Record<string, TypedReindexScope<ColumnOf<DB, T>>>;
}

/**
 * A collection typed over table `T` of `DB`: the writer takes `Insertable<DB[T]>` values and
 * `Updateable<DB[T]>` patches, returns `Selectable<DB[T]>` rows (or what the collection's
 * `load` returns), and `writeWithJobs` hands its callback a `Transaction<DB>`.
 */
export type TypedCollection<DB, T extends keyof DB & string, R extends Selectable<DB[T]> = Selectable<DB[T]>> = Collection<R, Insertable<DB[T]>, Updateable<DB[T]>, DB>;
