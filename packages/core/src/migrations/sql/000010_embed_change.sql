-- Documents assembled from several tables (a collection's `embeds`, see embedded-table.ts).
--
-- A change to an embedded row reaches the documents that read it. When its link column names
-- the document itself (a product's stock row, a join row), the writing transaction bumps those
-- documents' versions at once: one document per changed row. Otherwise (a category read by a
-- million products, a user by every annotation of theirs) the writing transaction pays O(1):
-- it records the change here and enqueues one fan-out job, and a drainer bumps the documents'
-- versions and enqueues their sync jobs later, in bounded chunks of their own short transactions.
--
-- Why a row per changed link value, and not only the fan-out job:
-- - A drain pass that meets a document with a change still to expand must not confirm it as
--   it stands (its document was built before the change): it asks here, by the document's
--   link values (`version > expanded`), and bumps and rewrites the document itself.
-- - `tether verify` finds a fan-out that was lost (a pending change with no fan-out job left)
--   and a document an expansion skipped (its version below a completed change's), from
--   Postgres alone, in the fast pass.
--
-- `version` comes from tether.version_seq like every version, taken after the row lock (ON
-- CONFLICT … DO UPDATE), so a later change of the same link value always holds a larger one.
-- `expanded` is the version of the last change whose fan-out finished; the row is pending
-- while `version > expanded`. Finished rows are pruned by maintenance after a retention.
CREATE TABLE tether.embed_change (
  -- "<collection>.<embed>", e.g. "catalog_product.category".
  embed text NOT NULL,
  -- The changed row's link value, as text (the value of the embed's `on` column).
  link text NOT NULL,
  version bigint NOT NULL,
  expanded bigint NOT NULL DEFAULT 0,
  changed_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (embed, link)
);
CREATE INDEX embed_change_pending_idx ON tether.embed_change (embed) WHERE version > expanded;
CREATE INDEX embed_change_changed_idx ON tether.embed_change (changed_at) WHERE version <= expanded;

-- Fan-out jobs (name `fanout_<collection>`) are claimed apart from sync jobs, by their own
-- short transactions: this partial index finds the few of them without walking the sync jobs
-- of the claim index (a backlog of millions of due sync jobs is exactly what a fan-out makes).
CREATE INDEX job_fanout_idx ON tether.job (priority, scheduled_at, id) WHERE starts_with(name, 'fanout_');
