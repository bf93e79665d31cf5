import { sql, type Kysely } from "kysely";

/**
 * Jobs in the table, and how many of them another drainer could claim right now (one
 * statement, one snapshot; the probe's own locks end with it).
 */
export async function claimability(db: Kysely<any>): Promise<{ total: number; claimable: number }> {
  const r = await sql<{ total: string; claimable: string }>`
    SELECT (SELECT count(*) FROM tether.job) AS total,
           (SELECT count(*) FROM (SELECT 1 FROM tether.job FOR UPDATE SKIP LOCKED) AS s) AS claimable`.execute(db);
  return { total: Number(r.rows[0]!.total), claimable: Number(r.rows[0]!.claimable) };
}

/** Open claim transactions (table-level RowShareLock on tether.job) of this database's drainers. */
export async function openClaims(db: Kysely<any>, applicationName = "tether-drainer"): Promise<number> {
  const r = await sql<{ n: string }>`
    SELECT count(DISTINCT l.pid) AS n FROM pg_locks l JOIN pg_stat_activity a ON a.pid = l.pid
    WHERE a.datname = current_database() AND a.application_name = ${applicationName}
      AND l.relation = 'tether.job'::regclass AND l.mode = 'RowShareLock' AND l.granted`.execute(db);
  return Number(r.rows[0]!.n);
}

/** Backends of this database with the given application name. */
export async function backends(db: Kysely<any>, applicationName = "tether-drainer"): Promise<number> {
  const r = await sql<{ n: string }>`
    SELECT count(*) AS n FROM pg_stat_activity WHERE datname = current_database() AND application_name = ${applicationName}`.execute(db);
  return Number(r.rows[0]!.n);
}
