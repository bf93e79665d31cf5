import { sql, type Kysely } from "kysely";

/** An author whose rename fans out to many annotations, and one whose rename reaches 10. */
export const BIG_AUTHOR = "acct:fanout-big@example.com";
export const SMALL_AUTHOR = "acct:fanout-small@example.com";
export const SMALL_FANOUT = 10;

/** Inserts an author (an annotation_user row) and `n` annotations of theirs, one INSERT … SELECT per million. */
export async function seedAuthor(db: Kysely<any>, userid: string, n: number): Promise<void> {
  await sql`INSERT INTO annotation_user (userid, display_name) VALUES (${userid}, ${`Author of ${n}`})`.execute(db);
  for (let from = 1; from <= n; from += 1_000_000) {
    const to = Math.min(n, from + 999_999);
    await sql`
      INSERT INTO annotation (userid, target_uri, text, tags)
      SELECT ${userid}, 'https://example.com/page/' || (g % 5000), 'note number ' || g || ' about something', ARRAY['tag' || (g % 20)]
      FROM generate_series(${from}::int, ${to}::int) AS g`.execute(db);
  }
  await sql`ANALYZE annotation`.execute(db);
  await sql`ANALYZE annotation_user`.execute(db);
}

/** A rename by plain SQL, in a statement (and transaction) of its own: with capture on, the trigger records it. */
export async function renameBySql(db: Kysely<any>, userid: string, displayName: string): Promise<void> {
  const r = await sql`UPDATE annotation_user SET display_name = ${displayName} WHERE userid = ${userid}`.execute(db);
  if (Number(r.numAffectedRows ?? 0) !== 1) throw new Error(`no annotation_user row ${userid}`);
}

/** Empties the queue and forgets every recorded change, so the next measurement starts from nothing pending. */
export async function clearFanoutWork(db: Kysely<any>): Promise<void> {
  await sql`TRUNCATE tether.job, tether.embed_change`.execute(db);
  await sql`VACUUM ANALYZE annotation`.execute(db);
  await sql`VACUUM ANALYZE tether.job`.execute(db);
}

/** Jobs in tether.job whose name is `name`. */
export async function jobCount(db: Kysely<any>, name: string): Promise<number> {
  const r = await sql<{ n: string }>`SELECT count(*) AS n FROM tether.job WHERE name = ${name}`.execute(db);
  return Number(r.rows[0]!.n);
}
