import { sql, type Kysely, type RawBuilder } from "kysely";
import type { Collection } from "../collection.js";
import { WRITER_SETTING } from "../capture/capture-options.js";
import { nextVersion } from "./version-store.js";
import { LOAD_ROWS } from "./load-query-store.js";
import { PREPARE_MARK } from "./preparing-client.js";

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
const WRITTEN_ID = "__tether_written_id";
const LOADED = "__tether_loaded";

/**
 * What a single-statement write returns: the row (through the collection's `loadQuery`, when it
 * declares one) and its job. `loaded` is set when the statement ran the collection's `loadQuery`:
 * false when that query returned no row for it (the row then is the table's, read after).
 */
export interface RowWithJob {
  row: Row;
  jobId: string;
  loaded?: boolean;
}

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

const STATEMENT_SLOT = "/*tether:statement*/";

/** The statement's SQL around a write statement, per collection: compiled once when its loadQuery takes no parameters. */
const wrappers = new WeakMap<Collection<any>, { head: string; tail: string } | "per-write">();

/**
 * `WITH tether_rows AS (<statement>) SELECT <the loadQuery's row>, <job id>, <written id>,
 * <loaded?> FROM tether_rows LEFT JOIN (<loadQuery over tether_rows>) ON <id>`. Everything but
 * the statement is the same for every write of a collection: compiled once and kept as text
 * (a write then compiles only its own statement, as a plain one does), unless the loadQuery
 * carries parameters of its own, which would have to be numbered after the statement's.
 */
function withLoadQuery(db: Db, collection: Collection<any>, statement: unknown): RawBuilder<Row> {
  const id = collection.idColumn;
  const around = (inner: RawBuilder<unknown>) => sql<Row>`WITH ${sql.id(LOAD_ROWS)} AS (${inner})
    SELECT tether_loaded.*, tether_written.${sql.id(JOB_ID)} AS ${sql.id(JOB_ID)},
           tether_written.${sql.id(id)}::text AS ${sql.id(WRITTEN_ID)}, tether_loaded.${sql.id(id)} IS NOT NULL AS ${sql.id(LOADED)}
    FROM ${sql.id(LOAD_ROWS)} AS tether_written
    LEFT JOIN (${collection.loadQuery!(db, LOAD_ROWS)}) AS tether_loaded ON tether_loaded.${sql.id(id)} = tether_written.${sql.id(id)}`;
  let w = wrappers.get(collection);
  if (w === undefined) {
    const compiled = around(sql.raw(STATEMENT_SLOT)).compile(db);
    const at = compiled.sql.indexOf(STATEMENT_SLOT);
    w = compiled.parameters.length === 0 && at >= 0 ? { head: PREPARE_MARK + compiled.sql.slice(0, at), tail: compiled.sql.slice(at + STATEMENT_SLOT.length) } : "per-write";
    wrappers.set(collection, w);
  }
  return w === "per-write" ? sql<Row>`${sql.raw(PREPARE_MARK)}${around(sql`${statement}`)}` : sql<Row>`${sql.raw(w.head)}${statement}${sql.raw(w.tail)}`;
}

/**
 * Runs a write statement that returns its row and job. With the collection's `loadQuery`, the
 * statement becomes a CTE that the query reads its row from, in the same statement: the row
 * comes back as `load` would return it, with no second round trip (nor a second wait for a
 * pooled connection). The written row's id and whether the query returned it come along, so a
 * row the query leaves out is told from no row at all.
 */
async function rowWithJob(db: Db, collection: Collection<any>, statement: unknown): Promise<RowWithJob | undefined> {
  if (!collection.loadQuery) {
    const first = (await sql<Row>`${sql.raw(PREPARE_MARK)}${statement}`.execute(db)).rows[0];
    if (!first) return undefined;
    const { [JOB_ID]: jobId, ...row } = first;
    return { row, jobId: String(jobId) };
  }
  const id = collection.idColumn;
  const first = (await withLoadQuery(db, collection, statement).execute(db)).rows[0];
  if (!first || first[WRITTEN_ID] === null || first[WRITTEN_ID] === undefined) return undefined;
  const { [JOB_ID]: jobId, [WRITTEN_ID]: writtenId, [LOADED]: loaded, ...row } = first;
  if (loaded === true) return { row, jobId: String(jobId), loaded: true };
  // The query leaves this row out (an inner join that finds nothing): not synced directly, its
  // job lets the drainer decide; the caller still gets the row, as the table holds it.
  const own = (await db.selectFrom(collection.table).selectAll().where(sql<boolean>`${sql.ref(id)} = ${writtenId}`).executeTakeFirst()) as Row | undefined;
  return { row: own ?? { [id]: writtenId }, jobId: String(jobId), loaded: false };
}

/**
 * Inserts a row at the sequence's next version and its sync job in ONE statement (a plain
 * insert's round trips: the capture hand-shake and the job ride along).
 */
export function insertRowWithJob(db: Db, collection: Collection<any>, values: Row, job: RowJob): Promise<RowWithJob | undefined> {
  return rowWithJob(
    db,
    collection,
    db
      .insertInto(collection.table)
      .values({ ...values, [collection.versionColumn]: flagged(collection, nextVersion()) })
      .returningAll()
      .returning(jobColumn(collection, job)),
  );
}

/** Applies `patch` to a live row, bumps its version and enqueues its job in ONE statement; undefined when there is no live row. */
export function updateRowWithJob(db: Db, collection: Collection<any>, id: unknown, patch: Row, job: RowJob): Promise<RowWithJob | undefined> {
  let q = db
    .updateTable(collection.table)
    .set({ ...patch, [collection.versionColumn]: flagged(collection, nextVersion(`${collection.table}.${collection.versionColumn}`)) })
    .where(collection.idColumn, "=", id);
  if (collection.deletedColumn) q = q.where(collection.deletedColumn, "is", null);
  return rowWithJob(db, collection, q.returningAll().returning(jobColumn(collection, job)));
}

/** Soft-deletes a live row (deletedColumn = now(), next version) and enqueues its job in ONE statement; undefined when there is no live row. */
export function softDeleteRowWithJob(db: Db, collection: Collection<any>, deletedColumn: string, id: unknown, job: RowJob): Promise<RowWithJob | undefined> {
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
  const r = await sql<Row>`${sql.raw(PREPARE_MARK)}
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
