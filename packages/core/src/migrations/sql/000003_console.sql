-- What the admin console shows that tether.job alone cannot: which drainers are alive, who did
-- what (audit), what happened to one entity over time, and the anti-entropy runs with the drift
-- they found. Paused lanes already carry their reason (tether.paused_name).

-- One row per running drainer process, upserted on every pass and on a timer, so an operator
-- sees "is anything draining?" without reaching each replica. A row whose seen_at is older than
-- a few heartbeat intervals is a drainer that is gone (SIGKILL, lost node); stopped_at is set by
-- a clean shutdown.
CREATE TABLE tether.drainer_heartbeat (
  id text PRIMARY KEY,
  host text NOT NULL,
  pid integer NOT NULL,
  version text NOT NULL,
  started_at timestamptz NOT NULL DEFAULT now(),
  seen_at timestamptz NOT NULL DEFAULT now(),
  passes bigint NOT NULL DEFAULT 0,
  failed_passes bigint NOT NULL DEFAULT 0,
  last_pass_at timestamptz,
  -- The counts of the last pass: claimed, repaired, retried, parked, expired, error, durationMs.
  last_pass jsonb,
  stopped_at timestamptz
);
CREATE INDEX drainer_heartbeat_seen_idx ON tether.drainer_heartbeat (seen_at);

-- Every admin action: who (the token's name and role), what, with which parameters, and how it
-- ended (HTTP status and a result summary). Append-only; tokens themselves are never stored.
CREATE TABLE tether.audit_log (
  id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  at timestamptz NOT NULL DEFAULT now(),
  actor text NOT NULL,
  role text NOT NULL,
  action text NOT NULL,
  params jsonb NOT NULL DEFAULT '{}'::jsonb,
  status integer NOT NULL,
  result jsonb
);
CREATE INDEX audit_log_at_idx ON tether.audit_log (at);

-- A bounded history per entity (lane + entity id): enqueued, synced, repaired, parked, ... so
-- the console's trace answers "what happened to this row?". Written by triggers for what the
-- job tables already say (a job inserted, a job moved to the dead-letter table) and by the
-- drainer for what only it knows (the outcome of a confirmed job). Pruned by maintenance (by
-- age, and to a number of newest events per entity).
-- UNLOGGED: it is a diagnostic history, not state. Skipping the WAL makes it cheap enough to
-- write in every enqueue and drain transaction; the price is that a crash of Postgres empties
-- it and standbys do not have it. Bulk re-index work is left out (see the triggers): while
-- such a job is pending the trace shows the job itself, and the drainer records any repair.
CREATE UNLOGGED TABLE tether.entity_event (
  id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  at timestamptz NOT NULL DEFAULT now(),
  name text NOT NULL,
  entity_id text NOT NULL,
  kind text NOT NULL CHECK (kind IN ('enqueued', 'synced', 'repaired', 'forced', 'deleted', 'parked', 'expired', 'cancelled', 'discarded', 'reprioritized')),
  job_id bigint,
  tag text,
  priority integer,
  detail text
);
CREATE INDEX entity_event_entity_idx ON tether.entity_event (name, entity_id, id);
-- BRIN: rows arrive in time order, so pruning by age needs no per-row index upkeep on insert.
CREATE INDEX entity_event_at_idx ON tether.entity_event USING brin (at);

-- Statement-level triggers with transition tables: one INSERT … SELECT per statement, however
-- many jobs it wrote (a re-index of a million rows is one extra statement, not a million).
CREATE FUNCTION tether.record_job_enqueued() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO tether.entity_event (name, entity_id, kind, job_id, tag, priority, detail)
  SELECT n.name, n.kwargs->>'id', 'enqueued', n.id, n.tag, n.priority,
         CASE WHEN n.last_error IS NOT NULL THEN 'retried from the dead-letter table'
              WHEN n.kwargs->>'force' = 'true' THEN 'forced' END
  FROM new_jobs n WHERE n.kwargs ? 'id' AND n.tag NOT LIKE 'reindex%';
  RETURN NULL;
END $$;
CREATE TRIGGER job_enqueued_event AFTER INSERT ON tether.job
  REFERENCING NEW TABLE AS new_jobs FOR EACH STATEMENT EXECUTE FUNCTION tether.record_job_enqueued();

CREATE FUNCTION tether.record_job_dead() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO tether.entity_event (name, entity_id, kind, job_id, tag, priority, detail)
  SELECT d.name, d.kwargs->>'id', d.reason, d.job_id, d.tag, d.priority, left(d.last_error, 500)
  FROM new_dead d WHERE d.kwargs ? 'id';
  RETURN NULL;
END $$;
CREATE TRIGGER dead_job_event AFTER INSERT ON tether.dead_job
  REFERENCING NEW TABLE AS new_dead FOR EACH STATEMENT EXECUTE FUNCTION tether.record_job_dead();

-- Anti-entropy runs started from the console, their progress while they run, and the drifted
-- entities they found (up to a sample per kind), so a finished run can be read later.
CREATE TABLE tether.verify_run (
  id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  collection text NOT NULL,
  status text NOT NULL DEFAULT 'running' CHECK (status IN ('running', 'done', 'failed')),
  started_by text NOT NULL,
  started_at timestamptz NOT NULL DEFAULT now(),
  -- Bumped with every progress report: a running row not updated for long was abandoned (its
  -- process died).
  updated_at timestamptz NOT NULL DEFAULT now(),
  finished_at timestamptz,
  buckets_total integer NOT NULL DEFAULT 0,
  buckets_done integer NOT NULL DEFAULT 0,
  buckets_compared integer NOT NULL DEFAULT 0,
  buckets_differing integer NOT NULL DEFAULT 0,
  drifted jsonb NOT NULL DEFAULT '{}'::jsonb,
  drifted_total integer NOT NULL DEFAULT 0,
  enqueued integer NOT NULL DEFAULT 0,
  error text
);
CREATE INDEX verify_run_started_idx ON tether.verify_run (started_at);

CREATE TABLE tether.verify_result (
  run_id bigint NOT NULL REFERENCES tether.verify_run (id) ON DELETE CASCADE,
  kind text NOT NULL,
  entity_id text NOT NULL,
  PRIMARY KEY (run_id, kind, entity_id)
);
