import { sql, type Kysely } from "kysely";
import { coreMigrations } from "./compiled.js";
import type { MigrationSet } from "./migration.js";

/** Advisory-lock key serialising concurrent `migrate` calls (API and drainers start together). */
const MIGRATE_LOCK = 0x7e74_4e52;

export interface MigrateResult {
  applied: { namespace: string; id: number; name: string }[];
}

/**
 * Applies tether's migrations, then each given set, in order; safe to run from many processes
 * at once, and through a transaction-mode pooler (PgBouncer): the lock that serialises them is
 * transaction-scoped, taken in each migration's own transaction, which re-reads what is applied
 * under it. A session-level lock would stay on whichever server connection the pooler gave the
 * `lock` statement, and block every later migrate that lands on another one.
 *
 * @example
 * await migrate(db, [{ namespace: "annotations", migrations: annotationMigrations }]);
 */
export async function migrate(db: Kysely<any>, sets: readonly MigrationSet[] = []): Promise<MigrateResult> {
  const all: MigrationSet[] = [{ namespace: "tether", migrations: coreMigrations }, ...sets];
  const applied: MigrateResult["applied"] = [];
  await db.transaction().execute(async (trx) => {
    await sql`SELECT pg_advisory_xact_lock(${MIGRATE_LOCK})`.execute(trx);
    await sql`CREATE SCHEMA IF NOT EXISTS tether`.execute(trx);
    await sql`CREATE TABLE IF NOT EXISTS tether.migration (
      namespace text NOT NULL, id integer NOT NULL, name text NOT NULL,
      applied_at timestamptz NOT NULL DEFAULT now(), PRIMARY KEY (namespace, id))`.execute(trx);
  });
  for (const set of all) {
    // Read without the lock first, so an up-to-date database costs one query per set.
    const have = await appliedIds(db, set.namespace);
    for (const m of [...set.migrations].sort((a, b) => a.id - b.id)) {
      if (have.has(m.id)) continue;
      await db.transaction().execute(async (trx) => {
        await sql`SELECT pg_advisory_xact_lock(${MIGRATE_LOCK})`.execute(trx);
        // Another process may have applied it while this one waited for the lock.
        if ((await appliedIds(trx, set.namespace, m.id)).has(m.id)) return;
        await sql.raw(m.sql).execute(trx);
        await sql`INSERT INTO tether.migration (namespace, id, name) VALUES (${set.namespace}, ${m.id}, ${m.name})`.execute(trx);
        applied.push({ namespace: set.namespace, id: m.id, name: m.name });
      });
    }
  }
  return { applied };
}

async function appliedIds(db: Kysely<any>, namespace: string, id?: number): Promise<Set<number>> {
  const done = id === undefined
    ? await sql<{ id: number }>`SELECT id FROM tether.migration WHERE namespace = ${namespace}`.execute(db)
    : await sql<{ id: number }>`SELECT id FROM tether.migration WHERE namespace = ${namespace} AND id = ${id}`.execute(db);
  return new Set(done.rows.map((r) => r.id));
}
