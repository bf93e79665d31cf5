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
 * at once.
 *
 * @example
 * await migrate(db, [{ namespace: "annotations", migrations: annotationMigrations }]);
 */
export async function migrate(db: Kysely<any>, sets: readonly MigrationSet[] = []): Promise<MigrateResult> {
  const all: MigrationSet[] = [{ namespace: "tether", migrations: coreMigrations }, ...sets];
  const applied: MigrateResult["applied"] = [];
  await db.connection().execute(async (conn) => {
    await sql`SELECT pg_advisory_lock(${MIGRATE_LOCK})`.execute(conn);
    try {
      await sql`CREATE SCHEMA IF NOT EXISTS tether`.execute(conn);
      await sql`CREATE TABLE IF NOT EXISTS tether.migration (
        namespace text NOT NULL, id integer NOT NULL, name text NOT NULL,
        applied_at timestamptz NOT NULL DEFAULT now(), PRIMARY KEY (namespace, id))`.execute(conn);
      for (const set of all) {
        const done = await sql<{ id: number }>`SELECT id FROM tether.migration WHERE namespace = ${set.namespace}`.execute(conn);
        const have = new Set(done.rows.map((r) => r.id));
        for (const m of [...set.migrations].sort((a, b) => a.id - b.id)) {
          if (have.has(m.id)) continue;
          await conn.transaction().execute(async (trx) => {
            await sql.raw(m.sql).execute(trx);
            await sql`INSERT INTO tether.migration (namespace, id, name) VALUES (${set.namespace}, ${m.id}, ${m.name})`.execute(trx);
          });
          applied.push({ namespace: set.namespace, id: m.id, name: m.name });
        }
      }
    } finally {
      await sql`SELECT pg_advisory_unlock(${MIGRATE_LOCK})`.execute(conn);
    }
  });
  return { applied };
}
