import { sql, type Kysely } from "kysely";
import type { Collection } from "../collection.js";
import { PgErrorCode, pgErrorCode } from "../pg-error-codes.js";

/** Every SQL statement `adoptCollection` issues on the adopted table lives here. */

type Db = Kysely<any>;

export interface ColumnInfo {
  name: string;
  type: string;
  notNull: boolean;
  hasDefault: boolean;
}

/** The table's columns, or undefined when the table does not exist. */
export async function tableColumns(db: Db, table: string): Promise<Map<string, ColumnInfo> | undefined> {
  const r = await sql<{ name: string; type: string; not_null: boolean; has_default: boolean; exists: boolean }>`
    SELECT a.attname AS name, format_type(a.atttypid, a.atttypmod) AS type, a.attnotnull AS not_null, a.atthasdef AS has_default
    FROM pg_attribute a WHERE a.attrelid = to_regclass(${table}) AND a.attnum > 0 AND NOT a.attisdropped`.execute(db);
  if (r.rows.length === 0) return undefined;
  return new Map(r.rows.map((c) => [c.name, { name: c.name, type: c.type, notNull: c.not_null, hasDefault: c.has_default }]));
}

export interface LockPolicy {
  lockTimeoutMs: number;
  retries: number;
  /** Called before each retry (for logging and counting). */
  onRetry?: (attempt: number, statement: string) => void;
}

/**
 * Runs DDL in its own short transaction with a lock_timeout, retrying on lock_not_available.
 * An ALTER TABLE waiting for its ACCESS EXCLUSIVE lock queues every later reader and writer of
 * the table behind it; the timeout bounds that queue to `lockTimeoutMs`, after which the writers
 * proceed and the DDL tries again a little later.
 */
export async function runDdl(db: Db, statement: string, policy: LockPolicy): Promise<void> {
  for (let attempt = 0; ; attempt++) {
    try {
      await db.transaction().execute(async (trx) => {
        await sql`SELECT set_config('lock_timeout', ${String(policy.lockTimeoutMs)}, true)`.execute(trx);
        await sql.raw(statement).execute(trx);
      });
      return;
    } catch (err) {
      if (pgErrorCode(err) !== PgErrorCode.lockNotAvailable || attempt >= policy.retries) throw err;
      policy.onRetry?.(attempt + 1, statement);
      await new Promise((r) => setTimeout(r, Math.min(5_000, 100 * 2 ** attempt) * (0.5 + Math.random())));
    }
  }
}

const qi = (ident: string) => ident.split(".").map((p) => `"${p}"`).join(".");

/** DDL text for the adoption steps (identifiers were validated by defineCollection). */
export const adoptDdl = {
  /** PG11+: a constant default is stored in the catalog, not written into every row: instant. */
  addVersionWithDefault: (c: Collection<any>) => `ALTER TABLE ${qi(c.table)} ADD COLUMN IF NOT EXISTS ${qi(c.versionColumn)} bigint NOT NULL DEFAULT 1`,
  addVersionNullable: (c: Collection<any>) => `ALTER TABLE ${qi(c.table)} ADD COLUMN IF NOT EXISTS ${qi(c.versionColumn)} bigint`,
  setVersionDefault: (c: Collection<any>) => `ALTER TABLE ${qi(c.table)} ALTER COLUMN ${qi(c.versionColumn)} SET DEFAULT 1`,
  addNotNullCheck: (c: Collection<any>) =>
    `ALTER TABLE ${qi(c.table)} ADD CONSTRAINT ${qi(checkName(c))} CHECK (${qi(c.versionColumn)} IS NOT NULL) NOT VALID`,
  /** SHARE UPDATE EXCLUSIVE: scans the table while reads and writes go on. */
  validateNotNullCheck: (c: Collection<any>) => `ALTER TABLE ${qi(c.table)} VALIDATE CONSTRAINT ${qi(checkName(c))}`,
  /** PG12+: proven by the validated check, so no scan under the ACCESS EXCLUSIVE lock. */
  setVersionNotNull: (c: Collection<any>) => `ALTER TABLE ${qi(c.table)} ALTER COLUMN ${qi(c.versionColumn)} SET NOT NULL`,
  dropNotNullCheck: (c: Collection<any>) => `ALTER TABLE ${qi(c.table)} DROP CONSTRAINT IF EXISTS ${qi(checkName(c))}`,
  addDeletedColumn: (c: Collection<any>, column: string) => `ALTER TABLE ${qi(c.table)} ADD COLUMN IF NOT EXISTS ${qi(column)} timestamptz`,
};

function checkName(c: Collection<any>): string {
  return `${c.table.split(".").pop()}_${c.versionColumn}_not_null`.slice(0, 63);
}

/** True when the NOT VALID check of an interrupted adoption is still there. */
export async function hasNotNullCheck(db: Db, c: Collection<any>): Promise<boolean> {
  const r = await sql`SELECT 1 FROM pg_constraint WHERE conrelid = to_regclass(${c.table}) AND conname = ${checkName(c)}`.execute(db);
  return r.rows.length > 0;
}

export async function countRows(db: Db, c: Collection<any>): Promise<number> {
  const r = await sql<{ n: string }>`SELECT count(*) AS n FROM ${sql.table(c.table)}`.execute(db);
  return Number(r.rows[0]!.n);
}

export interface KeysetBatch {
  /** Largest id of the batch, as text; undefined when the batch was empty. */
  last: string | undefined;
  /** Rows the batch looked at. */
  seen: number;
  /** Rows it changed (backfill) or jobs it enqueued. */
  affected: number;
}

/** `WHERE id > cursor`, with the cursor cast to the id column's own type (read from the catalog). */
function after(c: Collection<any>, idType: string, last: string | undefined) {
  return last === undefined ? sql`true` : sql`${sql.ref(c.idColumn)} > ${last}::${sql.raw(idType)}`;
}

/** Sets the version of up to `limit` rows after `last` (in id order) where it is NULL: one short transaction. */
export async function backfillVersionBatch(db: Db, c: Collection<any>, idType: string, last: string | undefined, limit: number): Promise<KeysetBatch> {
  const t = sql.table(c.table);
  const id = sql.ref(c.idColumn);
  const r = await sql<{ last: string | null; seen: string; affected: string }>`
    WITH b AS (SELECT ${id} AS id FROM ${t} WHERE ${after(c, idType, last)} ORDER BY ${id} LIMIT ${limit}),
         u AS (UPDATE ${t} SET ${sql.ref(c.versionColumn)} = 1 FROM b
               WHERE ${sql.ref(`${c.table.split(".").pop()}.${c.idColumn}`)} = b.id AND ${sql.ref(c.versionColumn)} IS NULL RETURNING 1)
    SELECT (SELECT b.id::text FROM b ORDER BY b.id DESC LIMIT 1) AS last, (SELECT count(*) FROM b) AS seen, (SELECT count(*) FROM u) AS affected`.execute(db);
  const row = r.rows[0]!;
  return { last: row.last ?? undefined, seen: Number(row.seen), affected: Number(row.affected) };
}

export interface InitialSyncJob {
  name: string;
  priority: number;
  tag: string;
}

/** Enqueues a sync job for up to `limit` rows after `last` (in id order), with one INSERT … SELECT. */
export async function enqueueInitialSyncBatch(db: Db, c: Collection<any>, idType: string, job: InitialSyncJob, last: string | undefined, limit: number): Promise<KeysetBatch> {
  const id = sql.ref(c.idColumn);
  const r = await sql<{ last: string | null; seen: string }>`
    WITH b AS (SELECT ${id} AS id FROM ${sql.table(c.table)} WHERE ${after(c, idType, last)} ORDER BY ${id} LIMIT ${limit}),
         ins AS (INSERT INTO tether.job (name, priority, tag, kwargs)
                 SELECT ${job.name}, ${job.priority}, ${job.tag}, jsonb_build_object('id', b.id::text) FROM b RETURNING 1)
    SELECT (SELECT b.id::text FROM b ORDER BY b.id DESC LIMIT 1) AS last, (SELECT count(*) FROM ins) AS seen`.execute(db);
  const row = r.rows[0]!;
  return { last: row.last ?? undefined, seen: Number(row.seen), affected: Number(row.seen) };
}

/** SQL text of the initial sync as one INSERT … SELECT (for a migration file). */
export function initialSyncSql(c: Collection<any>, job: InitialSyncJob): string {
  const quote = (s: string) => `'${s.replaceAll("'", "''")}'`;
  return `INSERT INTO tether.job (name, priority, tag, kwargs)\nSELECT ${quote(job.name)}, ${job.priority}, ${quote(job.tag)}, jsonb_build_object('id', t.${qi(c.idColumn)}::text)\nFROM ${qi(c.table)} AS t;\nSELECT pg_notify('tether_wake', ${quote(job.name)});`;
}
