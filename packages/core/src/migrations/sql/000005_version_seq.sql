-- One source of versions for every entity of every collection, so that a version only moves
-- forward per entity and is never used twice ("same version, two bodies" is the one state
-- external versioning cannot repair: the engine keeps whichever body arrived first).
--
-- Why a global sequence and not `version + 1`:
-- - A re-inserted id (DELETE then INSERT, a key change, an upsert after a delete, COPY) knows
--   nothing of its earlier life: counting from the row alone starts again at 1, below the
--   tombstone and equal to the old document's version. A sequence value taken by the insert is
--   above every value taken before it, tombstones included.
-- - Sequence values are never handed out twice, even when the transaction that took them rolls
--   back. A transaction that died after the engine saw its version (the drainer's leapfrog past
--   a document that is ahead, sent before its COMMIT) leaves that version burnt, not free for
--   the next write to reuse with another body.
-- - CACHE 1: a cache hands each session its own block of values, so a session could take a
--   value below one another session already used, and a re-insert could land below the
--   tombstone. With no cache, a value taken after the row lock is above the previous holder's.
--
-- tether.next_version(above) is used for EVERY version tether assigns: the writer's create,
-- update and deletes (a hard delete's tombstone), the capture triggers (BEFORE INSERT and
-- BEFORE UPDATE, the delete's tombstone) and the drainer's leapfrog. It returns the next value
-- of the sequence, or above + 1 when that is higher (a row whose version predates the sequence,
-- or a document edited ahead behind tether's back), and then moves the sequence past it, so the
-- sequence stays above every version it returned. `tether migrate`, `adopt` and enabling
-- capture also raise the sequence above each collection's highest version up front.
--
-- Existing installs: nothing is rewritten. Rows keep their versions; the next write of each
-- row takes a version above both its own and the sequence. Capture triggers installed before
-- this migration keep their old logic until capture is enabled again.
CREATE SEQUENCE tether.version_seq AS bigint MINVALUE 1 START WITH 1 CACHE 1 NO CYCLE;

CREATE FUNCTION tether.next_version(above bigint DEFAULT 0) RETURNS bigint
LANGUAGE plpgsql VOLATILE AS $$
DECLARE
  v bigint := nextval('tether.version_seq');
BEGIN
  IF above IS NOT NULL AND v <= above THEN
    v := above + 1;
    -- setval is not undone by a rollback either: the value stays burnt.
    PERFORM setval('tether.version_seq', v) WHERE v > (SELECT last_value FROM tether.version_seq);
  END IF;
  RETURN v;
END $$;
