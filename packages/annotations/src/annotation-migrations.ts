import type { MigrationSet } from "@tether/core";

/** The reference service's domain tables. */
export const annotationMigrations: MigrationSet = {
  namespace: "annotations",
  migrations: [
    {
      id: 1,
      name: "annotation",
      sql: `
CREATE TABLE annotation (
  id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  userid text NOT NULL,
  groupid text NOT NULL DEFAULT '__world__',
  target_uri text NOT NULL,
  text text NOT NULL DEFAULT '',
  tags text[] NOT NULL DEFAULT '{}',
  -- Bumped in every writing transaction; the downstream document carries it as its external version.
  version bigint NOT NULL DEFAULT 1,
  created timestamptz NOT NULL DEFAULT now(),
  updated timestamptz NOT NULL DEFAULT now(),
  -- Soft delete: the document becomes a tombstone; a purge removes the row later.
  deleted_at timestamptz
);
CREATE INDEX annotation_userid_idx ON annotation (userid);
CREATE INDEX annotation_groupid_idx ON annotation (groupid);
CREATE INDEX annotation_updated_idx ON annotation (updated);
CREATE INDEX annotation_created_idx ON annotation (created);
`,
    },
    {
      id: 2,
      name: "annotation_user",
      sql: `
-- The annotations' authors: a display name and the hidden flag (a moderator's "not in public
-- search"). Every annotation document embeds its author's. annotation.userid stays plain text,
-- not a foreign key: an author with no row here reads as no display name, not hidden.
CREATE TABLE annotation_user (
  userid text PRIMARY KEY,
  display_name text,
  hidden boolean NOT NULL DEFAULT false
);
-- A change of a user fans out to that user's annotations, walked in id order a chunk at a time:
-- (userid, id) serves those chunks and the user re-index scope, so it replaces the index on
-- userid alone.
CREATE INDEX annotation_userid_id_idx ON annotation (userid, id);
DROP INDEX annotation_userid_idx;
`,
    },
  ],
};
