-- The outbox. One row per (entity, reason to sync it), written in the same transaction as
-- the domain row. A row leaves this table only when the drainer has read the entity back
-- equal on both sides (DELETE), or when it is moved to tether.dead_job (parked or expired):
-- nothing is ever dropped.
CREATE SCHEMA IF NOT EXISTS tether;

CREATE TABLE tether.job (
  id bigint GENERATED ALWAYS AS IDENTITY (CYCLE) PRIMARY KEY,
  -- Job type; dispatches to a collection's handler (e.g. sync_annotation).
  name text NOT NULL,
  enqueued_at timestamptz NOT NULL DEFAULT now(),
  scheduled_at timestamptz NOT NULL DEFAULT now(),
  expires_at timestamptz NOT NULL DEFAULT now() + interval '30 days',
  -- Lower runs first: live traffic 1, admin re-index 100 / 1000.
  priority integer NOT NULL DEFAULT 1,
  -- Who enqueued it: scopes metrics and the queue-length alert (tags starting with
  -- "reindex" are admin work and never page).
  tag text NOT NULL,
  -- {"id": <entity id>, "force"?: true, "version"?: <n>}; "version" is carried by the job of
  -- a hard delete (the version the delete must have downstream). The entity id is deliberately
  -- NOT a foreign key: the job must outlive a hard delete of its entity.
  kwargs jsonb NOT NULL DEFAULT '{}'::jsonb,
  -- How many passes tried and failed to confirm this job. Bounds retries of permanent
  -- per-item failures (mapping errors, oversized documents) before the job is parked,
  -- and drives the exponential backoff of retryable ones.
  attempts integer NOT NULL DEFAULT 0,
  -- Why the last pass did not confirm it; shown by `tether parked list` and /admin/queue.
  last_error text,
  CONSTRAINT job_name_not_blank CHECK (name <> ''),
  CONSTRAINT job_kwargs_is_object CHECK (jsonb_typeof(kwargs) = 'object')
);

-- Claims walk this index one priority at a time with `scheduled_at <= now()` as an index
-- condition, so the scan stops at the first future job: future-scheduled rows cost nothing,
-- and parked/expired rows do not live in this table (see tether.dead_job and the sweep).
-- A plain (priority, enqueued_at) index would filter past every future or expired row.
CREATE INDEX job_claim_idx ON tether.job (priority, scheduled_at, id);

-- Finds expired jobs for the sweep without scanning live ones.
CREATE INDEX job_expires_idx ON tether.job (expires_at);

-- Dead-letter parking. Parked jobs (a permanent failure repeated `maxAttempts` times, an
-- unknown job name, malformed kwargs) and expired jobs are moved here with their reason, so
-- they stay visible to operators and alerts while costing the claim query nothing.
-- `tether parked retry` moves them back.
CREATE TABLE tether.dead_job (
  id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  job_id bigint NOT NULL,
  name text NOT NULL,
  enqueued_at timestamptz NOT NULL,
  scheduled_at timestamptz NOT NULL,
  expires_at timestamptz NOT NULL,
  priority integer NOT NULL,
  tag text NOT NULL,
  kwargs jsonb NOT NULL,
  attempts integer NOT NULL,
  last_error text,
  reason text NOT NULL CHECK (reason IN ('parked', 'expired')),
  dead_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX dead_job_reason_idx ON tether.dead_job (reason, dead_at);

-- Completions, append-only (no hot row to contend on between drainers), so the
-- completion-rate alert is computable from Postgres alone. Pruned by maintenance.
CREATE TABLE tether.job_stat (
  at timestamptz NOT NULL DEFAULT now(),
  name text NOT NULL,
  tag text NOT NULL,
  priority integer NOT NULL,
  outcome text NOT NULL,
  count integer NOT NULL CHECK (count > 0)
);
CREATE INDEX job_stat_at_idx ON tether.job_stat (at);

-- Pausable lanes: a paused job name is not claimed (drain a lane before Elasticsearch
-- maintenance) without restarting any drainer.
CREATE TABLE tether.paused_name (
  name text PRIMARY KEY,
  paused_at timestamptz NOT NULL DEFAULT now(),
  reason text
);
