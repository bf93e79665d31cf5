-- The writer's job insert as a function with a plan kept per connection (measured with
-- `pnpm bench write`).
--
-- createWithJob, updateWithJob and the soft delete write their row and its job in one statement.
-- As a CTE (`WITH r AS (INSERT … RETURNING *) INSERT INTO tether.job … FROM r`) that statement
-- was parsed and planned afresh on every write, and the planning of the CTE, not the job's
-- heap and index entries, was most of what a write cost beyond the plain insert. Called from
-- the row statement's RETURNING list, this function inserts the job with a plan PL/pgSQL
-- prepares once per connection, and the row statement stays the plain one plus one column.
--
-- Same row as before: scheduled `delay_ms` ahead, kwargs {"id": entity_id}. `now()` is the
-- transaction's start, as in the statement that calls it.
CREATE FUNCTION tether.enqueue_row(name text, entity_id text, delay_ms bigint, priority integer, tag text)
RETURNS bigint LANGUAGE plpgsql VOLATILE AS $$
DECLARE
  job_id bigint;
BEGIN
  INSERT INTO tether.job (name, scheduled_at, priority, tag, kwargs)
  VALUES (enqueue_row.name, now() + delay_ms * interval '1 millisecond', enqueue_row.priority, enqueue_row.tag,
          jsonb_build_object('id', entity_id))
  RETURNING id INTO job_id;
  RETURN job_id;
END $$;
