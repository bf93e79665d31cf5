import { sql, type Kysely } from "kysely";
import type { Collection } from "../collection.js";

/** Reads one entity's source row for the console's trace. */

export interface EntityRow {
  row: Record<string, unknown>;
  version: number;
  deleted: boolean;
}

/**
 * The row with id `id`, or undefined. `id` must already be canonical for `idType` (see
 * canonicalEntityId): it is cast to the column's own type so the primary key index is used.
 */
export async function readEntityRow(db: Kysely<any>, collection: Collection<any>, id: string, idType: string | undefined): Promise<EntityRow | undefined> {
  if (collection.load) {
    const row = (await collection.load(db, [id]))[0] as Record<string, unknown> | undefined;
    return row ? { row, version: Number(row[collection.versionColumn]), deleted: collection.isDeleted(row) } : undefined;
  }
  const cast = idType && /^[a-z][a-z0-9 ]*$/.test(idType) ? idType : "text";
  const r = await sql<Record<string, unknown>>`
    SELECT * FROM ${sql.table(collection.table)} AS t WHERE t.${sql.ref(collection.idColumn)} = ${id}::${sql.raw(cast)} LIMIT 1`.execute(db);
  const row = r.rows[0];
  if (!row) return undefined;
  return { row, version: Number(row[collection.versionColumn]), deleted: collection.isDeleted(row) };
}
