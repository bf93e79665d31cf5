import { sql, type Kysely, type RawBuilder } from "kysely";
import type { Collection } from "../collection.js";
import { WRITER_SETTING } from "../capture/capture-options.js";
import { nextVersion } from "./version-store.js";

type Db = Kysely<any>;
type Row = Record<string, unknown>;

/** The job a single-statement write enqueues for its row. */
export interface RowJob {
  name: string;
  priority: number;
  tag: string;
  delayMs: number;
}

const JOB_ID = "__tether_job_id";
const TOMBSTONE = "__tether_tombstone_version";

/**
 * `value`, computed after setting the capture hand-shake flag (`tether.writer`) for the rest of
 * the transaction: evaluated while the statement produces its row, so the capture triggers of
 * this same statement (row-level BEFORE, statement-level AFTER) already see it. A CASE, whose
 * WHEN Postgres evaluates before its THEN, rather than a sub-select: no subplan to plan and run.
 */
const flagged = (collection: Collection<any>, value: RawBuilder<unknown>) =>
  sql`CASE WHEN set_config(${WRITER_SETTING}, ${collection.name}, true) IS NOT NULL THEN ${value} END`;

/**
 * The job of the row a statement returns, as one more RETURNING column: `tether.enqueue_row`
 * (migration 000008) inserts it with a plan kept per connection, so the statement costs the
 * plain one's parse and plan plus a function call.
 */
const jobColumn = (collection: Collection<any>, job: RowJob) =>
  sql<string>`tether.enqueue_row(${job.name}, ${sql.ref(collection.idColumn)}::text, ${job.delayMs}::bigint, ${job.priority}::int, ${job.tag})::text`.as(JOB_ID);

async function rowWithJob(statement: { execute(): Promise<Row[]> }): Promise<{ row: Row; jobId: string } | undefined> {
  const first = (await statement.execute())[0];
  if (!first) return undefined;
  const { [JOB_ID]: jobId, ...row } = first;
  return { row, jobId: String(jobId) };
}

/**
 * Inserts a row at the sequence's next version and its sync job in ONE statement (a plain
 * insert's round trips: the capture hand-shake and the job ride along).
 */
export function insertRowWithJob(db: Db, collection: Collection<any>, values: Row, job: RowJob): Promise<{ row: Row; jobId: string } | undefined> {
  return rowWithJob(
    db
      .insertInto(collection.table)
      .values({ ...values, [collection.versionColumn]: flagged(collection, nextVersion()) })
      .returningAll()
      .returning(jobColumn(collection, job)),
  );
}

/** Applies `patch` to a live row, bumps its version and enqueues its job in ONE statement; undefined when there is no live row. */
export function updateRowWithJob(db: Db, collection: Collection<any>, id: unknown, patch: Row, job: RowJob): Promise<{ row: Row; jobId: string } | undefined> {
  let q = db
    .updateTable(collection.table)
    .set({ ...patch, [collection.versionColumn]: flagged(collection, nextVersion(`${collection.table}.${collection.versionColumn}`)) })
    .where(collection.idColumn, "=", id);
  if (collection.deletedColumn) q = q.where(collection.deletedColumn, "is", null);
  return rowWithJob(q.returningAll().returning(jobColumn(collection, job)));
}

/** Soft-deletes a live row (deletedColumn = now(), next version) and enqueues its job in ONE statement; undefined when there is no live row. */
export function softDeleteRowWithJob(db: Db, collection: Collection<any>, deletedColumn: string, id: unknown, job: RowJob): Promise<{ row: Row; jobId: string } | undefined> {
  return updateRowWithJob(db, collection, id, { [deletedColumn]: sql`now()` }, job);
}

/**
 * Deletes a row and enqueues its job (carrying the version its tombstone needs) in ONE
 * statement; undefined when there was no row. The capture hand-shake is set in the WHERE
 * clause, before the row goes: a DELETE has no value of its own to carry it. The tombstone
 * takes `tether.next_version` above the row's version: a re-insert of the id later takes a
 * version above it.
 */
export async function hardDeleteRowWithJob(db: Db, collection: Collection<any>, id: unknown, job: RowJob): Promise<{ row: Row; jobId: string; tombstoneVersion: number } | undefined> {
  const gone = db
    .deleteFrom(collection.table)
    .where(collection.idColumn, "=", id)
    .where(sql<boolean>`${flagged(collection, sql.lit(true))}`)
    .returningAll();
  const r = await sql<Row>`
    WITH r AS (${gone}),
    j AS (
      INSERT INTO tether.job (name, scheduled_at, priority, tag, kwargs)
      SELECT ${job.name}, now() + ${job.delayMs}::bigint * interval '1 millisecond', ${job.priority}::int, ${job.tag},
             jsonb_build_object('id', r.${sql.ref(collection.idColumn)}::text, 'version', tether.next_version(r.${sql.ref(collection.versionColumn)}))
      FROM r
      RETURNING id, kwargs->>'version' AS version
    )
    SELECT r.*, (SELECT id FROM j)::text AS ${sql.ref(JOB_ID)}, (SELECT version FROM j) AS ${sql.ref(TOMBSTONE)} FROM r`.execute(db);
  const first = r.rows[0];
  if (!first) return undefined;
  const { [JOB_ID]: jobId, [TOMBSTONE]: tombstone, ...row } = first;
  return { row, jobId: String(jobId), tombstoneVersion: Number(tombstone) };
}
