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
