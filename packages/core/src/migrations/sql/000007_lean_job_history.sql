-- The job table at the physical limit: every write path and every drain pass pays for what
-- tether.job and its history cost per row, so both get leaner (measured with `pnpm bench
-- write queue events`).

-- 1. No trigger on tether.job. The per-statement trigger that copied every enqueued job into
--    tether.entity_event cost a quarter of an enqueue and a good part of createWithJob. A
--    pending job is its own history (the trace reads it from tether.job); once it leaves the
--    table, the row that records how it left carries when it was enqueued: the drainer's batch
--    row below for a confirmed job, the dead-letter row's event for a parked or expired one.
DROP TRIGGER job_enqueued_event ON tether.job;
DROP FUNCTION tether.record_job_enqueued();

-- Parked and expired jobs never reach a drainer's batch row: their event says when they were
-- enqueued too (bulk re-index work aside, as before).
CREATE OR REPLACE FUNCTION tether.record_job_dead() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO tether.entity_event (at, name, entity_id, kind, job_id, tag, priority, detail)
  SELECT d.enqueued_at, d.name, d.kwargs->>'id', 'enqueued', d.job_id, d.tag, d.priority,
         CASE WHEN d.kwargs->>'force' = 'true' THEN 'forced' END
  FROM new_dead d WHERE d.kwargs ? 'id' AND d.tag NOT LIKE 'reindex%';
  INSERT INTO tether.entity_event (name, entity_id, kind, job_id, tag, priority, detail)
  SELECT d.name, d.kwargs->>'id', d.reason, d.job_id, d.tag, d.priority, left(d.last_error, 500)
  FROM new_dead d WHERE d.kwargs ? 'id';
  RETURN NULL;
END $$;

-- 2. The drainer's outcomes, one row per drain pass and lane with the confirmed jobs in
--    arrays, instead of one row (and two index entries) per job. Position i of every array
--    describes the same job. UNLOGGED for the same reason as tether.entity_event: a diagnostic
--    history, not state. Pruned by maintenance by age (the per-entity bound applies to
--    tether.entity_event only: a batch row is never rewritten).
CREATE UNLOGGED TABLE tether.entity_event_batch (
  id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  at timestamptz NOT NULL DEFAULT now(),
  name text NOT NULL,
  entity_ids text[] NOT NULL,
  job_ids bigint[] NOT NULL,
  -- synced, repaired, forced or deleted, per job.
  kinds text[] NOT NULL,
  tags text[] NOT NULL,
  priorities integer[] NOT NULL,
  enqueued_at timestamptz[] NOT NULL,
  CONSTRAINT entity_event_batch_arrays_align CHECK (
    cardinality(job_ids) = cardinality(entity_ids) AND cardinality(kinds) = cardinality(entity_ids)
    AND cardinality(tags) = cardinality(entity_ids) AND cardinality(priorities) = cardinality(entity_ids)
    AND cardinality(enqueued_at) = cardinality(entity_ids))
);
-- The trace's lookup: which batches hold this entity. GIN's pending list (fastupdate) makes
-- the insert of a batch's ids one append; they are merged into the index in bulk later.
CREATE INDEX entity_event_batch_entity_idx ON tether.entity_event_batch USING gin (entity_ids);
CREATE INDEX entity_event_batch_at_idx ON tether.entity_event_batch USING brin (at);

-- 3. One index fewer on tether.job: the expiry sweep is served by the claim index. Expired
--    jobs are due (their scheduled_at is long past), so they sit at the front of the claim
--    index, and the claim moves those it meets to tether.dead_job in the same statement.
DROP INDEX tether.job_expires_idx;
