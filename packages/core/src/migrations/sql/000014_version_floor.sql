-- Either side going back in time. Every version comes from tether.version_seq, and a version is
-- unique only while that sequence moves forward. A Postgres restored from a backup, recovered to
-- a point in time or failed over to a lagging replica winds it back, while the engine keeps the
-- newer documents: versions the engine already holds would be handed out again.
--
-- 1. The version floor: what the last check found per collection. `tether migrate`, a drainer's
--    start and the maintenance leader (each cycle) read the highest version in the collection's
--    index and raise the sequence above it (tether.next_version(highest)). A check that had to
--    raise it found the engine ahead of the sequence: Postgres went back. A check that found the
--    index's highest version below the one the last check found: the index went back (restored
--    from a snapshot, its alias moved to an older index, deleted and made again). Either is
--    recorded in `restore_*` and said (the restore_detected alert, `tether status`), and the
--    scheduled fast verify of the collection runs at once, until one finished clean after it.
CREATE TABLE tether.version_floor (
  collection text PRIMARY KEY,
  -- The highest version the index held, and the version the sequence would have handed out next.
  engine_highest bigint NOT NULL,
  sequence_next bigint NOT NULL,
  checked_at timestamptz NOT NULL DEFAULT now(),
  -- The last check that found the engine at or above the sequence (NULL: never).
  restore_at timestamptz,
  restore_side text CHECK (restore_side IN ('postgres', 'index')),
  restore_engine_highest bigint,
  restore_sequence_next bigint
);

-- 2. Documents found ahead of their rows: a drain pass that meets a document above its row's
--    version (or at it with another body) and raises the row past it counts it here,
--    append-only (no hot row between drainers), beside tether.job_stat. Many in a short window
--    mean the rows went back (restore_detected). Pruned by maintenance with tether.job_stat.
CREATE TABLE tether.ahead_stat (
  at timestamptz NOT NULL DEFAULT now(),
  collection text NOT NULL,
  count integer NOT NULL CHECK (count > 0)
);
CREATE INDEX ahead_stat_at_idx ON tether.ahead_stat (at);
