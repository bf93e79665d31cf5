import { sql, type Kysely } from "kysely";
import type { LoadQuery } from "../collection.js";
import { arrayLiteral } from "./array-literal.js";

/** The relation a collection's `loadQuery` selects from: a batch of the table's rows, or the row a write returns. */
export const LOAD_ROWS = "tether_rows";

/**
 * The `load` of a collection that declares a `loadQuery`: its SELECT over the table's rows with
 * these ids (a CTE Postgres inlines, so the plan is the one of the query written over the table).
 */
export function loadThroughQuery(table: string, idColumn: string, query: LoadQuery): (db: Kysely<any>, ids: readonly string[]) => Promise<readonly any[]> {
  return async (db, ids) => {
    if (ids.length === 0) return [];
    const rows = db.with(LOAD_ROWS, (qc) => qc.selectFrom(table).selectAll().where(sql<boolean>`${sql.ref(idColumn)} = ANY(${arrayLiteral(ids)})`));
    return query(rows, LOAD_ROWS).execute();
  };
}
