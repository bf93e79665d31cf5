-- Anti-entropy that runs by itself (the drainer's maintenance leader verifies every collection on
-- an interval) and a fast verify for every id type.
--
-- 1. The bucket key of an entity id, computed the same way by Postgres and by the sink that
--    stores it in every document (`tether.key`): an id that is an integer a bigint holds is its
--    own key (integer ids keep comparing by id range, served by the primary key); any other id
--    (a uuid, a text) is keyed by the first 60 bits of the md5 of its text, spread evenly over
--    [0, 2^60). Both sides sum the same buckets of keys, so a uuid- or text-keyed collection
--    is verified by the bucketed comparison too. IMMUTABLE, so a table can index it:
--    CREATE INDEX ON <table> (tether.entity_key(<id>::text)) serves each bucket's range (see
--    docs/verify.md); without it each window of buckets scans the table.
CREATE FUNCTION tether.entity_key(id text) RETURNS bigint
LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE AS $$
  SELECT CASE
    WHEN id ~ '^-?[0-9]+$' AND id::numeric BETWEEN -9223372036854775808 AND 9223372036854775807 THEN id::numeric::bigint
    ELSE ('x' || substr(md5(id), 1, 15))::bit(60)::bigint
  END
$$;

-- 2. Scheduled runs beside the console's in tether.verify_run. A scheduled run is taken by one
--    process at a time (a lease, renewed with every checkpoint) and records after each window of
--    buckets where the next one starts (`cursor`, a bucket key) with the figures so far, so a
--    leader killed mid-run is followed by one that resumes from the checkpoint instead of
--    starting over. `mode` fast is the bucketed comparison, deep the content comparison (which
--    checkpoints per collection only: a scroll does not outlive its process).
ALTER TABLE tether.verify_run
  ADD COLUMN mode text NOT NULL DEFAULT 'fast' CHECK (mode IN ('fast', 'deep')),
  ADD COLUMN cursor text,
  ADD COLUMN documents_compared bigint NOT NULL DEFAULT 0,
  ADD COLUMN documents_total bigint NOT NULL DEFAULT 0,
  ADD COLUMN resumes integer NOT NULL DEFAULT 0,
  -- Scheduled runs only (NULL for the console's): which process works on the run, and until
  -- when; a run whose lease passed is resumed by the next maintenance leader.
  ADD COLUMN lease_owner text,
  ADD COLUMN lease_until timestamptz;
-- The last completed run of each collection and mode (metrics, alerts, status).
CREATE INDEX verify_run_finished_idx ON tether.verify_run (collection, mode, finished_at) WHERE status = 'done';
-- One scheduled run of a collection and mode at a time, whichever replica starts it.
CREATE UNIQUE INDEX verify_run_scheduled_idx ON tether.verify_run (collection, mode) WHERE status = 'running' AND lease_until IS NOT NULL;
