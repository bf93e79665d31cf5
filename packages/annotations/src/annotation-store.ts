import { sql, type Kysely, type QueryCreator, type RawBuilder, type SelectQueryBuilder } from "kysely";
import type { AnnotationDocumentRow, AnnotationRow, AnnotationUserRow } from "./annotation-row.js";

/**
 * Every statement the reference service issues on its tables for reading; writes go through
 * tether's writer (row and job in one transaction; a user's change with its fan-out job).
 */

type Db = Kysely<any>;

/** The live (not soft-deleted) annotation with this id, or undefined. */
export async function findLiveAnnotation(db: Db, id: string): Promise<AnnotationRow | undefined> {
  return (await db.selectFrom("annotation").selectAll().where("id", "=", id).where("deleted_at", "is", null).executeTakeFirst()) as AnnotationRow | undefined;
}

/**
 * The live annotations among these ids, in no particular order. `withHidden: false` leaves out
 * those whose author is hidden now (annotation_user.hidden), whatever the index says yet.
 * Default: every live one.
 */
export async function findLiveAnnotations(db: Db, ids: readonly string[], opts: { withHidden?: boolean } = {}): Promise<AnnotationRow[]> {
  if (ids.length === 0) return [];
  let q = db.selectFrom("annotation as a").selectAll("a").where("a.id", "in", [...ids]).where("a.deleted_at", "is", null);
  if (opts.withHidden === false) {
    q = q.where(({ not, exists, selectFrom }) => not(exists(selectFrom("annotation_user as u").select("u.userid").whereRef("u.userid", "=", "a.userid").where("u.hidden", "=", true))));
  }
  return (await q.execute()) as AnnotationRow[];
}

/**
 * The annotations as their documents are built, over `rows` (a relation of annotation rows: a
 * batch of the table's, or the row a write's statement returns): each row with its author's
 * display name and hidden flag (null when the author has no annotation_user row), one join.
 * Soft-deleted rows are included (their documents become tombstones). The collection's
 * `loadQuery`: tether runs it over a batch of ids and inside each write's own statement.
 */
export function annotationDocumentsQuery(db: QueryCreator<any>, rows: string): SelectQueryBuilder<any, any, AnnotationDocumentRow> {
  return db
    .selectFrom(`${rows} as a`)
    .leftJoin("annotation_user as u", "u.userid", "a.userid")
    .selectAll("a")
    .select(["u.display_name as user_display_name", "u.hidden as user_hidden"]) as SelectQueryBuilder<any, any, AnnotationDocumentRow>;
}

/** The annotation_user row of this user, or undefined. */
export async function findAnnotationUser(db: Db, userid: string): Promise<AnnotationUserRow | undefined> {
  return (await db.selectFrom("annotation_user").selectAll().where("userid", "=", userid).executeTakeFirst()) as AnnotationUserRow | undefined;
}

/** `updated` for a patch: the database clock, set in the statement that bumps the version. */
export function updatedNow(): RawBuilder<Date> {
  return sql<Date>`now()`;
}
