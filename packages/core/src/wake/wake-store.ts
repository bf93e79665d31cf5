import { sql, type Kysely } from "kysely";
import { WAKE_CHANNEL, WRITER_SETTING } from "../capture/capture-options.js";

/**
 * NOTIFYs listening drainers that due-now work was enqueued. Inside a transaction the
 * notification is delivered on COMMIT (never for a rollback), and Postgres folds identical
 * notifications of one transaction into one. Call it only for work that is due now: waking a
 * drainer for a job still in its grace period would run a pass that finds nothing.
 *
 * @example
 * await db.transaction().execute(async (trx) => { await enqueueSomething(trx); await notifyWake(trx, "sync_widget"); });
 */
export async function notifyWake(db: Kysely<any>, jobName = ""): Promise<void> {
  await sql`SELECT pg_notify(${WAKE_CHANNEL}, ${jobName})`.execute(db);
}

/** Makes jobs due now and wakes drainers, in one statement (notifies only when a job moved). */
export async function expediteJobs(db: Kysely<any>, ids: readonly string[]): Promise<number> {
  if (ids.length === 0) return 0;
  const r = await sql<{ n: string }>`
    WITH u AS (
      UPDATE tether.job SET scheduled_at = now() WHERE id = ANY(${[...ids]}::bigint[]) AND scheduled_at > now() RETURNING name
    )
    SELECT count(*) AS n, (SELECT pg_notify(${WAKE_CHANNEL}, min(name)) FROM u HAVING count(*) > 0) AS notified FROM u`.execute(db);
  return Number(r.rows[0]?.n ?? 0);
}

/** Makes a lane's jobs enqueued since `since` due now and wakes drainers, in one statement. */
export async function expediteLaneSince(db: Kysely<any>, name: string, since: Date): Promise<number> {
  const r = await sql<{ n: string }>`
    WITH u AS (
      UPDATE tether.job SET scheduled_at = now()
      WHERE name = ${name} AND enqueued_at >= ${since.toISOString()}::timestamptz AND scheduled_at > now() RETURNING name
    )
    SELECT count(*) AS n, (SELECT pg_notify(${WAKE_CHANNEL}, min(name)) FROM u HAVING count(*) > 0) AS notified FROM u`.execute(db);
  return Number(r.rows[0]?.n ?? 0);
}

/** Checks a channel name (it is spliced into LISTEN, which takes no parameters). */
export function checkChannel(channel: string): string {
  if (!/^[a-z_][a-z0-9_]{0,62}$/.test(channel)) throw new Error(`invalid channel name "${channel}"`);
  return channel;
}

/** Starts receiving wake-ups on a dedicated session (a bare pg client, not a pooled one). */
export async function listenOn(client: { query(text: string): Promise<unknown> }, channel: string): Promise<void> {
  await client.query(`LISTEN ${checkChannel(channel)}`);
}

/**
 * The writer's side of the capture hand-shake: while the transaction-local setting holds the
 * collection's name, that collection's capture triggers stay out of the way. "" clears it.
 */
export async function setWriterFlag(db: Kysely<any>, collectionName: string): Promise<void> {
  await sql`SELECT set_config(${WRITER_SETTING}, ${collectionName}, true)`.execute(db);
}
