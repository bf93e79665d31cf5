import { sql, type Kysely } from "kysely";

/** Resolves when Postgres answers a trivial query. */
export async function pingPostgres(db: Kysely<any>): Promise<void> {
  await sql`SELECT 1`.execute(db);
}
