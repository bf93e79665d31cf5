import { sql, type Kysely, type RawBuilder } from "kysely";
import type { Collection } from "../collection.js";

/**
 * Versions come from one place: `tether.next_version(above)` (migration 000005), a value of the
 * global sequence `tether.version_seq` that is above `above` and above every version handed out
 * before it, and never handed out again, even when its transaction rolls back. See
 * docs/collections-and-versions.md ("The version rule") and ../write/version-rule.ts.
 */

/**
 * The next version of a row, as an SQL expression for your own statements (`writeWithJobs`,
 * a migration, a service's store): above the row's current version and above every version any
 * entity was given before. Without a column (an INSERT), the next value of the sequence.
 *
 * `version + 1` is safe only for an UPDATE of a row that keeps its key; an INSERT (a re-inserted
 * id above all), a key change or an upsert must take `nextVersion`.
 *
 * @example
 * await writer.writeWithJobs(db, products, async (trx) => {
 *   const rows = await trx.updateTable("product").set({ price_cents: 990, version: nextVersion("version") })
 *     .where("category_id", "=", c).returningAll().execute();
 *   return rows.map((row) => ({ id: String(row.id), row }));
 * });
 */
export function nextVersion(column?: string): RawBuilder<string> {
  return column === undefined ? sql<string>`tether.next_version()` : sql<string>`tether.next_version(${sql.ref(column)})`;
}

/**
 * Raises the version sequence above the collection's highest version, so rows written before
 * tether (or before migration 000005) stay below every version handed out from now on. One
 * `max()` read of the table outside any DDL transaction; the sequence only ever moves forward.
 * Returns the highest version handed out so far (at or above the table's highest).
 *
 * @example
 * await raiseVersionFloor(db, products);
 */
export async function raiseVersionFloor(db: Kysely<any>, collection: Collection<any>): Promise<number> {
  // The value nextval hands out next is last_value + 1, or last_value itself before the first call.
  const r = await sql<{ floor: string }>`
    WITH m AS (SELECT max(${sql.ref(collection.versionColumn)})::bigint AS v FROM ${sql.table(collection.table)}),
    s AS (SELECT last_value + CASE WHEN is_called THEN 1 ELSE 0 END AS upcoming FROM tether.version_seq)
    SELECT coalesce((SELECT setval('tether.version_seq', m.v) FROM m, s WHERE m.v >= s.upcoming), (SELECT upcoming - 1 FROM s))::text AS floor`.execute(db);
  return Number(r.rows[0]?.floor ?? 0);
}
