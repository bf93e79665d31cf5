import pg from "pg";
import { randomBytes } from "node:crypto";
import { dropDatabase } from "./scratch-database.js";

/** A short id naming this test run's databases (tether_t_<run>_*) and indices (t<run>_*). */
export function runId(): string {
  return `${Date.now().toString(36)}${randomBytes(2).toString("hex")}`;
}

/** The same server URL pointed at another database. */
export function adminUrl(baseUrl: string, database: string): string {
  const u = new URL(baseUrl);
  u.pathname = `/${database}`;
  return u.toString();
}

/** Drops every database and index this run created. */
export async function dropRunArtifacts(pgUrl: string, esUrl: string, id: string): Promise<void> {
  const admin = new pg.Client({ connectionString: pgUrl });
  await admin.connect();
  try {
    const r = await admin.query<{ datname: string }>(
      "SELECT datname FROM pg_database WHERE datname LIKE $1 OR datname = $2",
      [`tether_t_${id}_%`, `tether_tpl_${id}`],
    );
    for (const { datname } of r.rows) await dropDatabase(pgUrl, datname);
  } finally {
    await admin.end();
  }
  await fetch(new URL(`/t${id}_*?expand_wildcards=all`, esUrl), { method: "DELETE" }).catch(() => undefined);
}
