import { sql, type Kysely } from "kysely";
import { WAKE_CHANNEL } from "../capture/capture-options.js";

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
