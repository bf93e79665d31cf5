import { sql, type Kysely, type RawBuilder } from "kysely";
import type { AnnotationRow } from "./annotation-row.js";

/**
 * Every statement the reference service issues on the annotation table for reading; writes go
 * through tether's writer (row and job in one transaction).
 */

type Db = Kysely<any>;

/** The live (not soft-deleted) annotation with this id, or undefined. */
export async function findLiveAnnotation(db: Db, id: string): Promise<AnnotationRow | undefined> {
  return (await db.selectFrom("annotation").selectAll().where("id", "=", id).where("deleted_at", "is", null).executeTakeFirst()) as AnnotationRow | undefined;
}

/** The live annotations among these ids, in no particular order. */
export async function findLiveAnnotations(db: Db, ids: readonly string[]): Promise<AnnotationRow[]> {
  if (ids.length === 0) return [];
  return (await db.selectFrom("annotation").selectAll().where("id", "in", [...ids]).where("deleted_at", "is", null).execute()) as AnnotationRow[];
}

/** `updated` for a patch: the database clock, set in the statement that bumps the version. */
export function updatedNow(): RawBuilder<Date> {
  return sql<Date>`now()`;
}
