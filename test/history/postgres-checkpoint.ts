import { sql, type Kysely } from "kysely";

/**
 * A checkpoint of a history's database, in place, and the restore to it: what a point-in-time
 * recovery (or a `pg_restore` of a backup, or a failover to a lagging replica) does to the
 * database, in a fraction of its time. Every table of the application's schema and of tether's
 * (the domain rows, the queue, the dead letters, the fan-out changes, the verify runs, the version
 * floor) and every sequence (tether.version_seq, identities) goes back to what it held. Only the
 * schema itself (tether.migration, the triggers) stays: a restore of the same release.
 */

const SCHEMAS = ["public", "tether"];
const STORE = "history_checkpoint";

interface TableName {
  schema: string;
  name: string;
}

const copyOf = (t: TableName) => sql.table(`${STORE}.${t.schema}__${t.name}`);
const tableOf = (t: TableName) => sql.table(`${t.schema}.${t.name}`);

async function tables(db: Kysely<any>): Promise<TableName[]> {
  const r = await sql<{ schema: string; name: string }>`
    SELECT schemaname AS schema, tablename AS name FROM pg_tables
    WHERE schemaname = ANY(${SCHEMAS}::text[]) AND NOT (schemaname = 'tether' AND tablename = 'migration')
    ORDER BY 1, 2`.execute(db);
  return r.rows;
}

async function sequences(db: Kysely<any>): Promise<TableName[]> {
  const r = await sql<{ schema: string; name: string }>`
    SELECT schemaname AS schema, sequencename AS name FROM pg_sequences WHERE schemaname = ANY(${SCHEMAS}::text[]) ORDER BY 1, 2`.execute(db);
  return r.rows;
}

/** Copies every table and sequence value, as one consistent snapshot (one REPEATABLE READ transaction). */
export async function checkpointPostgres(db: Kysely<any>): Promise<void> {
  await db.transaction().setIsolationLevel("repeatable read").execute(async (trx) => {
    await sql`DROP SCHEMA IF EXISTS ${sql.id(STORE)} CASCADE`.execute(trx);
    await sql`CREATE SCHEMA ${sql.id(STORE)}`.execute(trx);
    for (const t of await tables(trx)) await sql`CREATE TABLE ${copyOf(t)} AS TABLE ${tableOf(t)}`.execute(trx);
    await sql`CREATE TABLE ${sql.table(`${STORE}.sequence_value`)} (schema text, name text, last_value bigint, is_called boolean)`.execute(trx);
    for (const s of await sequences(trx)) {
      await sql`INSERT INTO ${sql.table(`${STORE}.sequence_value`)} SELECT ${s.schema}, ${s.name}, last_value, is_called FROM ${tableOf(s)}`.execute(trx);
    }
  });
}

/**
 * Puts every table and sequence back to the checkpoint, in one transaction, with triggers off (a
 * restore replays no application logic: the capture triggers enqueue nothing). Waits for the locks
 * of transactions still open (a drain pass ends at its deadline).
 */
export async function restorePostgres(db: Kysely<any>): Promise<void> {
  await db.transaction().execute(async (trx) => {
    await sql`SET LOCAL session_replication_role = replica`.execute(trx);
    const all = await tables(trx);
    await sql`TRUNCATE ${sql.join(all.map(tableOf))}`.execute(trx);
    for (const t of all) await sql`INSERT INTO ${tableOf(t)} OVERRIDING SYSTEM VALUE SELECT * FROM ${copyOf(t)}`.execute(trx);
    const values = await sql<{ schema: string; name: string; last_value: string; is_called: boolean }>`SELECT * FROM ${sql.table(`${STORE}.sequence_value`)}`.execute(trx);
    for (const v of values.rows) await sql`SELECT setval(${`${v.schema}.${v.name}`}::regclass, ${v.last_value}::bigint, ${v.is_called})`.execute(trx);
  });
}
