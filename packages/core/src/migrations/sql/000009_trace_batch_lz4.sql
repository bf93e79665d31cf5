-- The trace history's batch rows compressed with lz4 where the server has it. A drain pass of
-- 2500 jobs writes one tether.entity_event_batch row of six 2500-element arrays (about 120 kB),
-- all of it TOASTed; pglz, the default, spent about three times as long compressing it as lz4
-- (measured: 5-11 ms against 2.1-2.4 ms per row), the largest single cost of a no-op pass in
-- Postgres. Only new rows take the new method; nothing is rewritten. A server built without lz4
-- keeps pglz (and says so), so the migration runs everywhere.
DO $$
BEGIN
  EXECUTE 'ALTER TABLE tether.entity_event_batch
             ALTER COLUMN entity_ids SET COMPRESSION lz4,
             ALTER COLUMN job_ids SET COMPRESSION lz4,
             ALTER COLUMN kinds SET COMPRESSION lz4,
             ALTER COLUMN tags SET COMPRESSION lz4,
             ALTER COLUMN priorities SET COMPRESSION lz4,
             ALTER COLUMN enqueued_at SET COMPRESSION lz4';
EXCEPTION WHEN feature_not_supported THEN
  RAISE NOTICE 'this server has no lz4: the trace history''s batch rows stay compressed with pglz';
END $$;
