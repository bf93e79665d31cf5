import { sql, type Kysely, type RawBuilder } from "kysely";
import type { Collection } from "../collection.js";
import { WRITER_SETTING } from "../capture/capture-options.js";
import { entityHashSql } from "../verify/entity-hash.js";
import { entityKeySql } from "../verify/entity-key.js";
import type { BucketRange, BucketSummary } from "../sink.js";
import type { RowState } from "../verify/verification-matrix.js";
import { nextVersion } from "./version-store.js";
import { arrayLiteral } from "./array-literal.js";

/**
 * Every statement core issues on the application's own tables lives here, written against the
 * collection's declaration (table, id, version and deleted columns) and never a literal name.
 */

type Db = Kysely<any>;
type Row = Record<string, unknown>;

/**
 * The type of a collection's id column (e.g. "bigint", "uuid", "text"): the one the collection
 * declares (`idType`), else the catalog's; undefined if the table is missing.
 */
export async function idColumnType(db: Db, collection: Collection<any>): Promise<string | undefined> {
  if (collection.idType) return collection.idType;
  const r = await sql<{ type: string }>`
    SELECT format_type(a.atttypid, NULL) AS type FROM pg_attribute a
    WHERE a.attrelid = to_regclass(${collection.table}) AND a.attname = ${collection.idColumn} AND NOT a.attisdropped`.execute(db);
  return r.rows[0]?.type;
}

/**
 * Whether the table has a valid index on `tether.entity_key(...)`, which serves the bucketed
 * verify's key ranges of uuid and text ids (docs/verify.md); false when the table is missing.
 */
export async function hasEntityKeyIndex(db: Db, collection: Collection<any>): Promise<boolean> {
  const r = await sql<{ ok: boolean }>`
    SELECT EXISTS (SELECT 1 FROM pg_index i WHERE i.indrelid = to_regclass(${collection.table}) AND i.indisvalid
                   AND pg_get_indexdef(i.indexrelid) LIKE '%tether.entity_key(%') AS ok`.execute(db);
  return r.rows[0]?.ok === true;
}

/**
 * Whether every id the table generates itself passes the id rule: an identity column (always
 * an integer type) whose sequence never goes below 1. False for anything else (a serial, a
 * default expression, no default): those ids are checked after the statement, in a transaction.
 */
export async function identityIdsInRule(db: Db, collection: Collection<any>): Promise<boolean> {
  const r = await sql<{ ok: boolean }>`
    SELECT s.seqmin >= 1 AS ok FROM pg_attribute a
    JOIN pg_sequence s ON s.seqrelid = pg_get_serial_sequence(${collection.table}, ${collection.idColumn})::regclass
    WHERE a.attrelid = to_regclass(${collection.table}) AND a.attname = ${collection.idColumn} AND a.attidentity <> '' AND NOT a.attisdropped`.execute(db);
  return r.rows[0]?.ok === true;
}

/** The id column's own type for a cast (so the primary key index is used); text when unknown. */
function idCast(type: string | undefined): RawBuilder<unknown> {
  return sql.raw(type && /^[a-z][a-z0-9 ]*$/.test(type) ? type : "text");
}

/** The row's next version (above every version handed out before: see version-store.ts). */
const nextVersionOf = (collection: Collection<any>) => nextVersion(`${collection.table}.${collection.versionColumn}`);

/**
 * The rows with these ids, by id as text (a hard-deleted entity is simply absent): through the
 * collection's own `load` when it declares one (a join), else the table's rows.
 */
export async function loadRows(trx: Db, collection: Collection<any>, ids: readonly string[]): Promise<Map<string, Row>> {
  if (ids.length === 0) return new Map();
  const found = collection.load
    ? await collection.load(trx, ids)
    : await trx.selectFrom(collection.table).selectAll().where(sql<boolean>`${sql.ref(collection.idColumn)} = ANY(${arrayLiteral(ids)})`).execute();
  return new Map(found.map((r) => [String((r as Row)[collection.idColumn]), r as Row]));
}

/**
 * Raises rows' versions past what the downstream holds (`above`), each only if the row still
 * has the version it was read at (so a write that committed meanwhile wins). Each row takes
 * `tether.next_version(above)`: a version never handed out before and never handed out again,
 * even if this transaction rolls back after the engine saw it. The statement carries the
 * capture hand-shake, so the bump enqueues no job of its own (the caller's job covers it).
 * A row another transaction holds locked is left as it is (not raised). Returns the version
 * each raised id now has.
 */
export async function bumpVersions(
  trx: Db,
  collection: Collection<any>,
  idType: string | undefined,
  bumps: readonly { id: string; above: number; seen: number }[],
): Promise<Map<string, number>> {
  if (bumps.length === 0) return new Map();
  const idc = sql.ref(`t.${collection.idColumn}`);
  const r = await sql<{ id: string; v: string }>`
    WITH u AS MATERIALIZED (
      SELECT * FROM unnest(${bumps.map((b) => b.id)}::text[], ${bumps.map((b) => b.above)}::bigint[], ${bumps.map((b) => b.seen)}::bigint[]) AS u(id, above, seen)
    ), locked AS (
      -- A row an application transaction holds is skipped, never waited for: the drain transaction
      -- already holds other rows, and waiting here could close a deadlock on the application's side.
      -- Its job is retried by a later pass.
      SELECT ${idc} AS id FROM ${sql.table(collection.table)} t JOIN u ON ${idc} = u.id::${idCast(idType)}
      WHERE t.${sql.ref(collection.versionColumn)} = u.seen
      FOR UPDATE OF t SKIP LOCKED
    )
    UPDATE ${sql.table(collection.table)} t
    SET ${sql.ref(collection.versionColumn)} = (SELECT tether.next_version(u.above) FROM (SELECT set_config(${WRITER_SETTING}, ${collection.name}, true)) AS tether_flag)
    FROM u
    WHERE ${idc} = u.id::${idCast(idType)} AND t.${sql.ref(collection.versionColumn)} = u.seen AND ${idc} IN (SELECT id FROM locked)
    RETURNING u.id, t.${sql.ref(collection.versionColumn)}::text AS v`.execute(trx);
  // The hand-shake is over: plain statements later in the transaction are captured again.
  await sql`SELECT set_config(${WRITER_SETTING}, '', true)`.execute(trx);
  return new Map(r.rows.map((x) => [x.id, Number(x.v)]));
}

/** Inserts a row at the next version of the sequence (above any tombstone of a re-inserted id). */
export async function insertRow(trx: Db, collection: Collection<any>, values: Row): Promise<Row> {
  return (await trx.insertInto(collection.table).values({ ...values, [collection.versionColumn]: nextVersion() }).returningAll().executeTakeFirstOrThrow()) as Row;
}

/** Applies `patch` to a live row and bumps its version in the same statement; undefined when there is no live row. */
export async function updateRow(trx: Db, collection: Collection<any>, id: unknown, patch: Row): Promise<Row | undefined> {
  let q = trx.updateTable(collection.table).set({ ...patch, [collection.versionColumn]: nextVersionOf(collection) }).where(collection.idColumn, "=", id);
  if (collection.deletedColumn) q = q.where(collection.deletedColumn, "is", null);
  return (await q.returningAll().executeTakeFirst()) as Row | undefined;
}

/** Marks a live row deleted (now) and bumps its version; undefined when there is no live row. */
export async function softDeleteRow(trx: Db, collection: Collection<any>, deletedColumn: string, id: unknown): Promise<Row | undefined> {
  return (await trx
    .updateTable(collection.table)
    .set({ [deletedColumn]: sql`now()`, [collection.versionColumn]: nextVersionOf(collection) })
    .where(collection.idColumn, "=", id)
    .where(deletedColumn, "is", null)
    .returningAll()
    .executeTakeFirst()) as Row | undefined;
}

/** Deletes a row; returns the version its tombstone takes, or undefined when there was no row. */
export async function hardDeleteRow(trx: Db, collection: Collection<any>, id: unknown): Promise<{ tombstoneVersion: number } | undefined> {
  const r = await trx
    .deleteFrom(collection.table)
    .where(collection.idColumn, "=", id)
    .returning(nextVersion(collection.versionColumn).as("tombstone_version"))
    .executeTakeFirst();
  return r ? { tombstoneVersion: Number((r as { tombstone_version: string }).tombstone_version) } : undefined;
}

/** A filter of a re-index request, already validated. */
export type EntityFilter =
  | { kind: "all" }
  | { kind: "equals"; column: string; value: string }
  | { kind: "range"; column: string; from?: Date | undefined; to?: Date | undefined }
  /** Every given id, present or not: a hard-deleted entity still needs its document removed. */
  | { kind: "ids"; ids: readonly string[] };

/** A query yielding one `id` (text) per entity matching `filter`, soft-deleted rows included. */
export function entityIdsQuery(collection: Collection<any>, filter: EntityFilter): RawBuilder<unknown> {
  if (filter.kind === "ids") return sql`SELECT DISTINCT u.id FROM unnest(${[...filter.ids]}::text[]) AS u(id)`;
  let where: RawBuilder<unknown>;
  if (filter.kind === "all") where = sql`true`;
  else if (filter.kind === "equals") where = sql`${sql.ref(`t.${filter.column}`)} = ${filter.value}`;
  else {
    const col = sql.ref(`t.${filter.column}`);
    where = sql`${filter.from ? sql`${col} >= ${filter.from.toISOString()}::timestamptz` : sql`true`} AND ${filter.to ? sql`${col} < ${filter.to.toISOString()}::timestamptz` : sql`true`}`;
  }
  return sql`SELECT ${sql.ref(`t.${collection.idColumn}`)}::text AS id FROM ${sql.table(collection.table)} AS t WHERE ${where}`;
}


/**
 * How anti-entropy keys a collection's rows: `idType` from `idColumnType`; `hashed` when its ids
 * are not integers, so its buckets are ranges of `tether.entity_key(id)` (../verify/entity-key.ts)
 * rather than of the id itself.
 */
export interface BucketKeying {
  idType: string | undefined;
  hashed: boolean;
}

/** Column expressions of the anti-entropy queries. */
function verifyColumns(collection: Collection<any>, keying?: BucketKeying) {
  const id = sql.ref(`t.${collection.idColumn}`);
  return {
    table: sql.table(collection.table),
    id,
    key: keying?.hashed ? sql.raw(entityKeySql(`t.${collection.idColumn}`)) : id,
    version: sql.ref(`t.${collection.versionColumn}`),
    live: collection.deletedColumn
      ? sql`(${sql.ref(`t.${collection.deletedColumn}`)} IS NULL OR ${sql.ref(`t.${collection.deletedColumn}`)}::text = 'false')`
      : sql`true`,
    hash: sql.raw(entityHashSql(`t.${collection.idColumn}`, `t.${collection.versionColumn}`)),
  };
}

/** Lowest and highest id, as text; nulls when the table is empty. */
export async function idBounds(db: Db, collection: Collection<any>): Promise<{ lo: string | null; hi: string | null }> {
  const { table, id } = verifyColumns(collection);
  const b = await sql<{ lo: string | null; hi: string | null }>`SELECT min(${id})::text AS lo, max(${id})::text AS hi FROM ${table} AS t`.execute(db);
  return { lo: b.rows[0]?.lo ?? null, hi: b.rows[0]?.hi ?? null };
}

/** A page of row states in id order after `after` (keyset; any id type, `idType` from `idColumnType`), for the deep verify's row pass. */
export async function rowStatesAfter(
  db: Db,
  collection: Collection<any>,
  idType: string | undefined,
  after: string | undefined,
  limit: number,
): Promise<{ id: string; version: number; live: boolean }[]> {
  const { table, id, version, live } = verifyColumns(collection);
  const cast = idCast(idType);
  const cond = after === undefined ? sql`true` : sql`${id} > ${after}::${cast}`;
  const r = await sql<{ id: string; version: string; live: boolean }>`
    SELECT ${id}::text AS id, ${version}::text AS version, ${live} AS live FROM ${table} AS t WHERE ${cond} ORDER BY ${id} LIMIT ${limit}`.execute(db);
  return r.rows.map((x) => ({ id: x.id, version: Number(x.version), live: x.live }));
}

/** The distinct `floor(id / size)` of the table's rows, ascending: the id buckets that hold any row. */
export async function occupiedBuckets(db: Db, collection: Collection<any>, size: number): Promise<bigint[]> {
  const { table, id } = verifyColumns(collection);
  const r = await sql<{ b: string }>`SELECT DISTINCT floor(${id}::numeric / ${size})::bigint::text AS b FROM ${table} AS t ORDER BY 1`.execute(db);
  return r.rows.map((x) => BigInt(x.b)).sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
}

/**
 * The key in `[from, to)`, as bigint literals with the upper bound inclusive (`to - 1`): `to` may
 * be 2^63, one past the largest bigint, which Postgres cannot hold. Bigint literals, not
 * numeric, so an index on the key (the primary key, or one on `tether.entity_key`) serves it.
 */
function keyInRange(key: RawBuilder<unknown> | ReturnType<typeof sql.ref>, range: BucketRange) {
  return sql`${key} >= ${String(range.from)}::bigint AND ${key} <= ${String(range.to - 1n)}::bigint`;
}

/** Summaries (count, hash sum, version sum) of live rows in contiguous ranges of keys, one query. */
export async function summarizeRows(db: Db, collection: Collection<any>, keying: BucketKeying, ranges: readonly BucketRange[]): Promise<BucketSummary[]> {
  const { table, key, version, live, hash } = verifyColumns(collection, keying);
  // width_bucket over numeric: the last bound may be 2^63, past bigint.
  const bounds = [...ranges.map((r) => String(r.from)), String(ranges[ranges.length - 1]!.to)];
  const span = { from: ranges[0]!.from, to: ranges[ranges.length - 1]!.to };
  const r = await sql<{ b: number; n: string; h: string; v: string }>`
    SELECT width_bucket(${key}::numeric, ${bounds}::numeric[]) AS b, count(*) AS n,
           coalesce(sum(${hash}), 0) AS h, coalesce(sum(${version}), 0) AS v
    FROM ${table} AS t
    WHERE ${keyInRange(key, span)} AND ${live}
    GROUP BY 1`.execute(db);
  const out: BucketSummary[] = ranges.map(() => ({ count: 0, hashSum: 0, versionSum: 0 }));
  for (const row of r.rows) out[Number(row.b) - 1] = { count: Number(row.n), hashSum: Number(row.h), versionSum: Number(row.v) };
  return out;
}

/** Version and liveness of every row whose key is in `range` (or with one of `ids`), by id as text. */
export async function rowStates(
  db: Db,
  collection: Collection<any>,
  keying: BucketKeying,
  where: { range: BucketRange } | { ids: readonly string[] },
): Promise<Map<string, RowState>> {
  const { table, id, key, version, live } = verifyColumns(collection, keying);
  const cond = "range" in where
    ? keyInRange(key, where.range)
    : sql`${id} = ANY(${[...where.ids]}::${idCast(keying.idType)}[])`;
  const r = await sql<{ id: string; version: string; live: boolean }>`
    SELECT ${id}::text AS id, ${version}::text AS version, ${live} AS live FROM ${table} AS t WHERE ${cond}`.execute(db);
  return new Map(r.rows.map((x) => [x.id, { version: Number(x.version), live: x.live }]));
}

/** How many rows the table holds (deleted ones included): a rebuild's progress total. */
export async function countRows(db: Db, collection: Collection<any>): Promise<number> {
  const { table } = verifyColumns(collection);
  const r = await sql<{ n: string }>`SELECT count(*)::text AS n FROM ${table} AS t`.execute(db);
  return Number(r.rows[0]?.n ?? 0);
}

/**
 * A page of whole rows in id order after `after` (keyset; `idType` from `idColumnType`), as
 * `toDocument` receives them: through the collection's `load` when it declares one (a row it
 * does not return is left out). `last` is the page's last id, where the next page starts.
 */
export async function rowPageAfter(
  db: Db,
  collection: Collection<any>,
  idType: string | undefined,
  after: string | undefined,
  limit: number,
): Promise<{ rows: { id: string; row: Row }[]; last: string | undefined }> {
  const { table, id } = verifyColumns(collection);
  const cond = after === undefined ? sql`true` : sql`${id} > ${after}::${idCast(idType)}`;
  if (collection.load) {
    const ids = await sql<{ id: string }>`SELECT ${id}::text AS id FROM ${table} AS t WHERE ${cond} ORDER BY ${id} LIMIT ${limit}`.execute(db);
    const loaded = await loadRows(db, collection, ids.rows.map((r) => r.id));
    return { rows: ids.rows.flatMap((r) => (loaded.has(r.id) ? [{ id: r.id, row: loaded.get(r.id)! }] : [])), last: ids.rows[ids.rows.length - 1]?.id };
  }
  const r = await sql<Row>`SELECT t.* FROM ${table} AS t WHERE ${cond} ORDER BY ${id} LIMIT ${limit}`.execute(db);
  const rows = r.rows.map((row) => ({ id: String(row[collection.idColumn]), row }));
  return { rows, last: rows[rows.length - 1]?.id };
}
