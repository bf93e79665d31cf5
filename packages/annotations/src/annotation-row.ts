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
