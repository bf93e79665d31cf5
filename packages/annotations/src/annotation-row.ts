/** A row of the reference service's `annotation` table. bigint columns arrive as strings. */
export interface AnnotationRow {
  id: string;
  userid: string;
  groupid: string;
  target_uri: string;
  text: string;
  tags: string[];
  version: string;
  created: Date;
  updated: Date;
  /** Set by a soft delete; the row is purged later. */
  deleted_at: Date | null;
}

/**
 * A row of `annotation_user`: an author's display name and the hidden flag (a moderator's "not
 * in public search"). A type, not an interface: the writer's verbs take it as a plain record.
 */
export type AnnotationUserRow = {
  userid: string;
  display_name: string | null;
  hidden: boolean;
};

/** The columns of a new `annotation_user` row (`hidden` defaults to false). */
export type AnnotationUserInsert = { userid: string; display_name?: string | null; hidden?: boolean };

/** A patch of an `annotation_user` row. */
export type AnnotationUserUpdate = { display_name?: string | null; hidden?: boolean };

/**
 * An annotation as its document is built (`annotationDocumentsQuery`): the row and what it reads
 * of its author's `annotation_user` row. Both are null (or absent, for a row read alone) when the
 * author has no such row: the document is then the one an annotation had before authors existed.
 */
export interface AnnotationDocumentRow extends AnnotationRow {
  user_display_name?: string | null;
  user_hidden?: boolean | null;
}
