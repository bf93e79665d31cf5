
CREATE SCHEMA tether;

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

ALTER TABLE ONLY tether.dead_job
    ADD CONSTRAINT dead_job_pkey PRIMARY KEY (id);

ALTER TABLE ONLY tether.job
    ADD CONSTRAINT job_pkey PRIMARY KEY (id);

ALTER TABLE ONLY tether.migration
    ADD CONSTRAINT migration_pkey PRIMARY KEY (namespace, id);

ALTER TABLE ONLY tether.paused_name
    ADD CONSTRAINT paused_name_pkey PRIMARY KEY (name);

ALTER TABLE ONLY tether.queue_sample
    ADD CONSTRAINT queue_sample_pkey PRIMARY KEY (id);

CREATE INDEX dead_job_reason_idx ON tether.dead_job USING btree (reason, dead_at);

CREATE INDEX job_claim_idx ON tether.job USING btree (priority, scheduled_at, id);

CREATE INDEX job_expires_idx ON tether.job USING btree (expires_at);

CREATE INDEX job_stat_at_idx ON tether.job_stat USING btree (at);

CREATE INDEX queue_sample_at_idx ON tether.queue_sample USING btree (at);

