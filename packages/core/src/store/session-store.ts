import { sql, type Kysely } from "kysely";

/**
 * Statements on the session rather than on a table: transaction-scoped limits, the advisory
 * lock of the maintenance leader, the database clock, a liveness probe.
 */

type Db = Kysely<any>;

/** statement_timeout for the rest of the current transaction. */
export async function setStatementTimeout(trx: Db, ms: number): Promise<void> {
  await sql`SELECT set_config('statement_timeout', ${String(ms)}, true)`.execute(trx);
}

/** Takes a transaction-scoped advisory lock if free; false when another session holds it. */
export async function tryAdvisoryXactLock(trx: Db, key: number): Promise<boolean> {
  const r = await sql<{ got: boolean }>`SELECT pg_try_advisory_xact_lock(${key}) AS got`.execute(trx);
  return r.rows[0]?.got === true;
}

/** The database clock (so alert windows never mix the application's clock with Postgres'). */
export async function databaseNow(db: Db): Promise<Date> {
  const r = await sql<{ now: Date }>`SELECT now() AS now`.execute(db);
  return new Date(r.rows[0]!.now);
}

/** Resolves when Postgres answers a trivial statement. */
export async function pingDatabase(db: Db): Promise<void> {
  await sql`SELECT 1`.execute(db);
}
