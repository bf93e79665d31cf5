
CREATE SCHEMA tether;

CREATE FUNCTION tether.enqueue_row(name text, entity_id text, delay_ms bigint, priority integer, tag text) RETURNS bigint
    LANGUAGE plpgsql
    AS $$
DECLARE
  job_id bigint;
BEGIN
  INSERT INTO tether.job (name, scheduled_at, priority, tag, kwargs)
  VALUES (enqueue_row.name, now() + delay_ms * interval '1 millisecond', enqueue_row.priority, enqueue_row.tag,
          jsonb_build_object('id', entity_id))
  RETURNING id INTO job_id;
  RETURN job_id;
END $$;

CREATE FUNCTION tether.entity_key(id text) RETURNS bigint
    LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE
    AS $_$
  SELECT CASE
    WHEN id ~ '^-?[0-9]+$' AND id::numeric BETWEEN -9223372036854775808 AND 9223372036854775807 THEN id::numeric::bigint
    ELSE ('x' || substr(md5(id), 1, 15))::bit(60)::bigint
  END
$_$;

CREATE FUNCTION tether.next_version(above bigint DEFAULT 0) RETURNS bigint
    LANGUAGE plpgsql
    AS $$
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

CREATE FUNCTION tether.record_job_dead() RETURNS trigger
    LANGUAGE plpgsql
    AS $$
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

CREATE TABLE tether.ahead_stat (
    at timestamp with time zone DEFAULT now() NOT NULL,
    collection text NOT NULL,
    count integer NOT NULL,
    CONSTRAINT ahead_stat_count_check CHECK ((count > 0))
);

CREATE TABLE tether.audit_log (
    id bigint NOT NULL,
    at timestamp with time zone DEFAULT now() NOT NULL,
    actor text NOT NULL,
    role text NOT NULL,
    action text NOT NULL,
    params jsonb DEFAULT '{}'::jsonb NOT NULL,
    status integer NOT NULL,
    result jsonb
);

ALTER TABLE tether.audit_log ALTER COLUMN id ADD GENERATED ALWAYS AS IDENTITY (
    SEQUENCE NAME tether.audit_log_id_seq
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1
);

CREATE TABLE tether.console_session (
    id_hash bytea NOT NULL,
    actor text NOT NULL,
    role text NOT NULL,
    token_mac bytea NOT NULL,
    created_at timestamp with time zone DEFAULT now() NOT NULL,
    seen_at timestamp with time zone DEFAULT now() NOT NULL,
    expires_at timestamp with time zone NOT NULL,
    revoked_at timestamp with time zone,
    revoked_reason text,
    CONSTRAINT console_session_revoked_reason_check CHECK ((revoked_reason = ANY (ARRAY['logout'::text, 'token_removed'::text]))),
    CONSTRAINT console_session_revoked_with_reason CHECK (((revoked_at IS NULL) = (revoked_reason IS NULL))),
    CONSTRAINT console_session_role_check CHECK ((role = ANY (ARRAY['viewer'::text, 'operator'::text])))
);

CREATE TABLE tether.dead_job (
    id bigint NOT NULL,
    job_id bigint NOT NULL,
    name text NOT NULL,
    enqueued_at timestamp with time zone NOT NULL,
    scheduled_at timestamp with time zone NOT NULL,
    expires_at timestamp with time zone NOT NULL,
    priority integer NOT NULL,
    tag text NOT NULL,
    kwargs jsonb NOT NULL,
    attempts integer NOT NULL,
    last_error text,
    reason text NOT NULL,
    dead_at timestamp with time zone DEFAULT now() NOT NULL,
    CONSTRAINT dead_job_reason_check CHECK ((reason = ANY (ARRAY['parked'::text, 'expired'::text])))
);

ALTER TABLE tether.dead_job ALTER COLUMN id ADD GENERATED ALWAYS AS IDENTITY (
    SEQUENCE NAME tether.dead_job_id_seq
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1
);

CREATE TABLE tether.drainer_heartbeat (
    id text NOT NULL,
    host text NOT NULL,
    pid integer NOT NULL,
    version text NOT NULL,
    started_at timestamp with time zone DEFAULT now() NOT NULL,
    seen_at timestamp with time zone DEFAULT now() NOT NULL,
    passes bigint DEFAULT 0 NOT NULL,
    failed_passes bigint DEFAULT 0 NOT NULL,
    last_pass_at timestamp with time zone,
    last_pass jsonb,
    stopped_at timestamp with time zone
);

CREATE TABLE tether.embed_change (
    embed text NOT NULL,
    link text NOT NULL,
    version bigint NOT NULL,
    expanded bigint DEFAULT 0 NOT NULL,
    changed_at timestamp with time zone DEFAULT now() NOT NULL
);

CREATE UNLOGGED TABLE tether.entity_event (
    id bigint NOT NULL,
    at timestamp with time zone DEFAULT now() NOT NULL,
    name text NOT NULL,
    entity_id text NOT NULL,
    kind text NOT NULL,
    job_id bigint,
    tag text,
    priority integer,
    detail text,
    CONSTRAINT entity_event_kind_check CHECK ((kind = ANY (ARRAY['enqueued'::text, 'synced'::text, 'repaired'::text, 'forced'::text, 'deleted'::text, 'parked'::text, 'expired'::text, 'cancelled'::text, 'discarded'::text, 'reprioritized'::text])))
);

CREATE UNLOGGED TABLE tether.entity_event_batch (
    id bigint NOT NULL,
    at timestamp with time zone DEFAULT now() NOT NULL,
    name text NOT NULL,
    entity_ids text[] NOT NULL,
    job_ids bigint[] NOT NULL,
    kinds text[] NOT NULL,
    tags text[] NOT NULL,
    priorities integer[] NOT NULL,
    enqueued_at timestamp with time zone[] NOT NULL,
    vias jsonb[],
    CONSTRAINT entity_event_batch_arrays_align CHECK (((cardinality(job_ids) = cardinality(entity_ids)) AND (cardinality(kinds) = cardinality(entity_ids)) AND (cardinality(tags) = cardinality(entity_ids)) AND (cardinality(priorities) = cardinality(entity_ids)) AND (cardinality(enqueued_at) = cardinality(entity_ids))))
);
ALTER TABLE ONLY tether.entity_event_batch ALTER COLUMN entity_ids SET COMPRESSION lz4;
ALTER TABLE ONLY tether.entity_event_batch ALTER COLUMN job_ids SET COMPRESSION lz4;
ALTER TABLE ONLY tether.entity_event_batch ALTER COLUMN kinds SET COMPRESSION lz4;
ALTER TABLE ONLY tether.entity_event_batch ALTER COLUMN tags SET COMPRESSION lz4;
ALTER TABLE ONLY tether.entity_event_batch ALTER COLUMN priorities SET COMPRESSION lz4;
ALTER TABLE ONLY tether.entity_event_batch ALTER COLUMN enqueued_at SET COMPRESSION lz4;
ALTER TABLE ONLY tether.entity_event_batch ALTER COLUMN vias SET COMPRESSION lz4;

ALTER TABLE tether.entity_event_batch ALTER COLUMN id ADD GENERATED ALWAYS AS IDENTITY (
    SEQUENCE NAME tether.entity_event_batch_id_seq
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1
);

ALTER TABLE tether.entity_event ALTER COLUMN id ADD GENERATED ALWAYS AS IDENTITY (
    SEQUENCE NAME tether.entity_event_id_seq
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1
);

CREATE TABLE tether.index_rebuild (
    collection text NOT NULL,
    alias text NOT NULL,
    target text NOT NULL,
    previous text,
    phase text NOT NULL,
    loaded_through text,
    rows_loaded bigint DEFAULT 0 NOT NULL,
    rows_total bigint DEFAULT 0 NOT NULL,
    started_at timestamp with time zone DEFAULT now() NOT NULL,
    updated_at timestamp with time zone DEFAULT now() NOT NULL,
    swapped_at timestamp with time zone,
    CONSTRAINT index_rebuild_phase_check CHECK ((phase = ANY (ARRAY['loading'::text, 'catching_up'::text, 'swapped'::text])))
);

CREATE TABLE tether.job (
    id bigint NOT NULL,
    name text NOT NULL,
    enqueued_at timestamp with time zone DEFAULT now() NOT NULL,
    scheduled_at timestamp with time zone DEFAULT now() NOT NULL,
    expires_at timestamp with time zone DEFAULT (now() + '30 days'::interval) NOT NULL,
    priority integer DEFAULT 1 NOT NULL,
    tag text NOT NULL,
    kwargs jsonb DEFAULT '{}'::jsonb NOT NULL,
    attempts integer DEFAULT 0 NOT NULL,
    last_error text,
    CONSTRAINT job_kwargs_is_object CHECK ((jsonb_typeof(kwargs) = 'object'::text)),
    CONSTRAINT job_name_not_blank CHECK ((name <> ''::text))
);

ALTER TABLE tether.job ALTER COLUMN id ADD GENERATED ALWAYS AS IDENTITY (
    SEQUENCE NAME tether.job_id_seq
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1
    CYCLE
);

CREATE TABLE tether.job_stat (
    at timestamp with time zone DEFAULT now() NOT NULL,
    name text NOT NULL,
    tag text NOT NULL,
    priority integer NOT NULL,
    outcome text NOT NULL,
    count integer NOT NULL,
    CONSTRAINT job_stat_count_check CHECK ((count > 0))
);

CREATE TABLE tether.migration (
    namespace text NOT NULL,
    id integer NOT NULL,
    name text NOT NULL,
    applied_at timestamp with time zone DEFAULT now() NOT NULL
);

CREATE TABLE tether.paused_name (
    name text NOT NULL,
    paused_at timestamp with time zone DEFAULT now() NOT NULL,
    reason text
);

CREATE TABLE tether.queue_sample (
    id bigint NOT NULL,
    at timestamp with time zone DEFAULT now() NOT NULL,
    live_length bigint NOT NULL,
    total_length bigint NOT NULL,
    expired bigint NOT NULL,
    parked bigint NOT NULL,
    oldest_due_age_seconds double precision NOT NULL,
    lanes jsonb DEFAULT '[]'::jsonb NOT NULL,
    fanout_length bigint DEFAULT 0 NOT NULL,
    fanout_oldest_due_age_seconds double precision DEFAULT 0 NOT NULL,
    CONSTRAINT queue_sample_lanes_is_array CHECK ((jsonb_typeof(lanes) = 'array'::text))
);

ALTER TABLE tether.queue_sample ALTER COLUMN id ADD GENERATED ALWAYS AS IDENTITY (
    SEQUENCE NAME tether.queue_sample_id_seq
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1
);

CREATE TABLE tether.verify_result (
    run_id bigint NOT NULL,
    kind text NOT NULL,
    entity_id text NOT NULL
);

CREATE TABLE tether.verify_run (
    id bigint NOT NULL,
    collection text NOT NULL,
    status text DEFAULT 'running'::text NOT NULL,
    started_by text NOT NULL,
    started_at timestamp with time zone DEFAULT now() NOT NULL,
    updated_at timestamp with time zone DEFAULT now() NOT NULL,
    finished_at timestamp with time zone,
    buckets_total integer DEFAULT 0 NOT NULL,
    buckets_done integer DEFAULT 0 NOT NULL,
    buckets_compared integer DEFAULT 0 NOT NULL,
    buckets_differing integer DEFAULT 0 NOT NULL,
    drifted jsonb DEFAULT '{}'::jsonb NOT NULL,
    drifted_total integer DEFAULT 0 NOT NULL,
    enqueued integer DEFAULT 0 NOT NULL,
    error text,
    mode text DEFAULT 'fast'::text NOT NULL,
    cursor text,
    documents_compared bigint DEFAULT 0 NOT NULL,
    documents_total bigint DEFAULT 0 NOT NULL,
    resumes integer DEFAULT 0 NOT NULL,
    lease_owner text,
    lease_until timestamp with time zone,
    CONSTRAINT verify_run_mode_check CHECK ((mode = ANY (ARRAY['fast'::text, 'deep'::text]))),
    CONSTRAINT verify_run_status_check CHECK ((status = ANY (ARRAY['running'::text, 'done'::text, 'failed'::text])))
);

ALTER TABLE tether.verify_run ALTER COLUMN id ADD GENERATED ALWAYS AS IDENTITY (
    SEQUENCE NAME tether.verify_run_id_seq
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1
);

CREATE TABLE tether.version_floor (
    collection text NOT NULL,
    engine_highest bigint NOT NULL,
    sequence_next bigint NOT NULL,
    checked_at timestamp with time zone DEFAULT now() NOT NULL,
    restore_at timestamp with time zone,
    restore_side text,
    restore_engine_highest bigint,
    restore_sequence_next bigint,
    CONSTRAINT version_floor_restore_side_check CHECK ((restore_side = ANY (ARRAY['postgres'::text, 'index'::text])))
);

CREATE SEQUENCE tether.version_seq
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1;

ALTER TABLE ONLY tether.audit_log
    ADD CONSTRAINT audit_log_pkey PRIMARY KEY (id);

ALTER TABLE ONLY tether.console_session
    ADD CONSTRAINT console_session_pkey PRIMARY KEY (id_hash);

ALTER TABLE ONLY tether.dead_job
    ADD CONSTRAINT dead_job_pkey PRIMARY KEY (id);

ALTER TABLE ONLY tether.drainer_heartbeat
    ADD CONSTRAINT drainer_heartbeat_pkey PRIMARY KEY (id);

ALTER TABLE ONLY tether.embed_change
    ADD CONSTRAINT embed_change_pkey PRIMARY KEY (embed, link);

ALTER TABLE ONLY tether.entity_event_batch
    ADD CONSTRAINT entity_event_batch_pkey PRIMARY KEY (id);

ALTER TABLE tether.entity_event_batch
    ADD CONSTRAINT entity_event_batch_vias_align CHECK (((vias IS NULL) OR (cardinality(vias) = cardinality(entity_ids)))) NOT VALID;

ALTER TABLE ONLY tether.entity_event
    ADD CONSTRAINT entity_event_pkey PRIMARY KEY (id);

ALTER TABLE ONLY tether.index_rebuild
    ADD CONSTRAINT index_rebuild_pkey PRIMARY KEY (collection);

ALTER TABLE ONLY tether.job
    ADD CONSTRAINT job_pkey PRIMARY KEY (id);

ALTER TABLE ONLY tether.migration
    ADD CONSTRAINT migration_pkey PRIMARY KEY (namespace, id);

ALTER TABLE ONLY tether.paused_name
    ADD CONSTRAINT paused_name_pkey PRIMARY KEY (name);

ALTER TABLE ONLY tether.queue_sample
    ADD CONSTRAINT queue_sample_pkey PRIMARY KEY (id);

ALTER TABLE ONLY tether.verify_result
    ADD CONSTRAINT verify_result_pkey PRIMARY KEY (run_id, kind, entity_id);

ALTER TABLE ONLY tether.verify_run
    ADD CONSTRAINT verify_run_pkey PRIMARY KEY (id);

ALTER TABLE ONLY tether.version_floor
    ADD CONSTRAINT version_floor_pkey PRIMARY KEY (collection);

CREATE INDEX ahead_stat_at_idx ON tether.ahead_stat USING btree (at);

CREATE INDEX audit_log_at_idx ON tether.audit_log USING btree (at);

CREATE INDEX console_session_expires_idx ON tether.console_session USING btree (expires_at);

CREATE INDEX dead_job_reason_idx ON tether.dead_job USING btree (reason, dead_at);

CREATE INDEX drainer_heartbeat_seen_idx ON tether.drainer_heartbeat USING btree (seen_at);

CREATE INDEX embed_change_changed_idx ON tether.embed_change USING btree (changed_at) WHERE (version <= expanded);

CREATE INDEX embed_change_pending_idx ON tether.embed_change USING btree (embed) WHERE (version > expanded);

CREATE INDEX entity_event_at_idx ON tether.entity_event USING brin (at);

CREATE INDEX entity_event_batch_at_idx ON tether.entity_event_batch USING brin (at);

CREATE INDEX entity_event_batch_entity_idx ON tether.entity_event_batch USING gin (entity_ids);

CREATE INDEX entity_event_entity_idx ON tether.entity_event USING btree (name, entity_id, id);

CREATE INDEX job_claim_idx ON tether.job USING btree (priority, scheduled_at, id);

CREATE INDEX job_fanout_idx ON tether.job USING btree (priority, scheduled_at, id) WHERE starts_with(name, 'fanout_'::text);

CREATE INDEX job_stat_at_idx ON tether.job_stat USING btree (at);

CREATE INDEX queue_sample_at_idx ON tether.queue_sample USING btree (at);

CREATE INDEX verify_run_finished_idx ON tether.verify_run USING btree (collection, mode, finished_at) WHERE (status = 'done'::text);

CREATE UNIQUE INDEX verify_run_scheduled_idx ON tether.verify_run USING btree (collection, mode) WHERE ((status = 'running'::text) AND (lease_until IS NOT NULL));

CREATE INDEX verify_run_started_idx ON tether.verify_run USING btree (started_at);

CREATE TRIGGER dead_job_event AFTER INSERT ON tether.dead_job REFERENCING NEW TABLE AS new_dead FOR EACH STATEMENT EXECUTE FUNCTION tether.record_job_dead();

ALTER TABLE ONLY tether.verify_result
    ADD CONSTRAINT verify_result_run_id_fkey FOREIGN KEY (run_id) REFERENCES tether.verify_run(id) ON DELETE CASCADE;

