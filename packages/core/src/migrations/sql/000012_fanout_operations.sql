-- What operators see of documents from several tables (a collection's `embeds`, migration 000010).
--
-- 1. Why a document was re-synced, after the fact. A sync job that a change of an embedded row
--    enqueued carries where it came from in kwargs.via: {table, column, value} of the changed row
--    and, when a fan-out expanded it, the fan-out job's id. While the job is pending the trace
--    reads it from tether.job; once the drainer confirms it, the job row is gone, and its tag
--    (`fanout:<embed>.<op>`) alone says which embed changed but not which row: "why was product
--    X rewritten at 14:02?" would need a guess from the rows as they are now. The drainer's batch
--    row keeps each job's via, aligned with its other arrays (position i is job i; NULL for a job
--    without one), and NULL as a whole for a pass that confirmed none (the live traffic's passes).
--    An array aggregate costs the confirming statement nothing measurable; a JSON object keyed by
--    job id cost 1.4x its Postgres CPU on a pass of fan-out jobs (measured per 2500 jobs).
ALTER TABLE tether.entity_event_batch ADD COLUMN vias jsonb[];
-- NOT VALID: the rows written before hold NULL, which passes; no scan under the lock.
ALTER TABLE tether.entity_event_batch ADD CONSTRAINT entity_event_batch_vias_align
  CHECK (vias IS NULL OR cardinality(vias) = cardinality(entity_ids)) NOT VALID;
DO $$
BEGIN
  EXECUTE 'ALTER TABLE tether.entity_event_batch ALTER COLUMN vias SET COMPRESSION lz4';
EXCEPTION WHEN feature_not_supported THEN
  RAISE NOTICE 'this server has no lz4: the trace history''s vias stay compressed with pglz';
END $$;

-- 2. Fan-out work apart from write-path work in the queue's history. Jobs tagged `fanout:…` (the
--    fan-out jobs and the sync jobs they expand into) are neither live traffic nor re-index
--    work: a rename that reaches a million documents queues a million jobs that must not page
--    as live work, yet a backlog of them must be visible. Each sample records their length and
--    the age of the oldest of them (the definitions are in docs/queue-figures.md); samples
--    written before this migration read 0.
ALTER TABLE tether.queue_sample
  ADD COLUMN fanout_length bigint NOT NULL DEFAULT 0,
  ADD COLUMN fanout_oldest_due_age_seconds double precision NOT NULL DEFAULT 0;
