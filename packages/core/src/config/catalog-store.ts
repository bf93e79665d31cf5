import { sql, type Kysely } from "kysely";

/**
 * The columns of `table` as Postgres resolves the name (search_path applies to an unqualified
 * one), or undefined when no such table or view exists.
 */
export async function tableColumns(db: Kysely<any>, table: string): Promise<string[] | undefined> {
  const rows = (
    await sql<{ exists: boolean; column: string | null }>`
      SELECT to_regclass(${table}) IS NOT NULL AS exists, a.attname AS column
      FROM (SELECT to_regclass(${table}) AS rel) r
      LEFT JOIN pg_catalog.pg_attribute a ON a.attrelid = r.rel AND a.attnum > 0 AND NOT a.attisdropped`.execute(db)
  ).rows;
  if (!rows[0]?.exists) return undefined;
  return rows.flatMap((r) => (r.column ? [r.column] : []));
}

/**
 * The columns of `table` that are the first key column of some valid index (what a lookup by
 * that column alone can use); empty for a view or an unknown table.
 */
export async function leadingIndexColumns(db: Kysely<any>, table: string): Promise<string[]> {
  const r = await sql<{ column: string }>`
    SELECT DISTINCT a.attname AS column
    FROM pg_catalog.pg_index i
    JOIN pg_catalog.pg_attribute a ON a.attrelid = i.indrelid AND a.attnum = i.indkey[0]
    WHERE i.indrelid = to_regclass(${table}) AND i.indisvalid`.execute(db);
  return r.rows.map((x) => x.column);
}
