-- Queue history for the alerts that must hold "for a window", and the one source of the
-- job-table gauges every drainer replica exports.
--
-- Why a table: "the live queue stayed above its high watermark for 5 minutes" cannot be
-- answered from tether.job alone once jobs are deleted, and it must survive drainer restarts
-- and agree across N replicas, the CLI and the API. Whichever drainer holds the maintenance
-- advisory lock appends one row per maintenance pass (at most one per sample interval across
-- all replicas); everyone else only reads. Reading the newest row is an index probe, so /metrics
-- scrapes on N replicas never count the job table themselves. Pruned by maintenance.
CREATE TABLE tether.queue_sample (
  id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  at timestamptz NOT NULL DEFAULT now(),
  -- Unexpired jobs, due or not, of live tags (tags not starting with "reindex").
  live_length bigint NOT NULL,
  -- Unexpired jobs of every tag, re-index included.
  total_length bigint NOT NULL,
  -- Expired jobs: swept to tether.dead_job plus any past expires_at not swept yet.
  expired bigint NOT NULL,
  -- Parked jobs in tether.dead_job.
  parked bigint NOT NULL,
  -- Age of the oldest due live job in seconds; 0 when none is due.
  oldest_due_age_seconds double precision NOT NULL,
  -- Per lane: [{"name", "tag", "priority", "length", "due"}], for the labelled gauges.
  lanes jsonb NOT NULL DEFAULT '[]'::jsonb,
  CONSTRAINT queue_sample_lanes_is_array CHECK (jsonb_typeof(lanes) = 'array')
);
CREATE INDEX queue_sample_at_idx ON tether.queue_sample (at);
