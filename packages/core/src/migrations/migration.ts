/** One forward-only schema change, applied once, in a transaction. */
export interface Migration {
  /** Strictly increasing within its namespace. */
  id: number;
  name: string;
  sql: string;
}

/** A named, ordered set of migrations: tether's own, or an application's domain tables. */
export interface MigrationSet {
  namespace: string;
  migrations: readonly Migration[];
}
