-- Zero-downtime index rebuilds (`tether rebuild`, `rebuildIndex`): one row per collection whose
-- index is being rebuilt, or whose previous index is kept for a rollback. The row is what makes
-- a rebuild resumable after its process died, and what stops two from running at once (a
-- rebuild holds an advisory lock on its collection while it works).
CREATE TABLE tether.index_rebuild (
  collection text PRIMARY KEY,
  -- The name readers and writers use: an alias once the first rebuild has swapped.
  alias text NOT NULL,
  -- The index being built (before the swap), then serving the alias (after it).
  target text NOT NULL,
  -- The index the alias pointed at before the swap, kept for `--rollback` until `--finish`.
  previous text,
  -- loading: rows are being bulk-loaded; catching_up: verifying and repairing the new index
  -- against the rows; swapped: the alias points at the new index, the previous one is kept.
  phase text NOT NULL CHECK (phase IN ('loading', 'catching_up', 'swapped')),
  -- The last id loaded (in id order): a resumed load starts after it.
  loaded_through text,
  rows_loaded bigint NOT NULL DEFAULT 0,
  rows_total bigint NOT NULL DEFAULT 0,
  started_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now(),
  swapped_at timestamptz
);
