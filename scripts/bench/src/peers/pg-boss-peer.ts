import { PgBoss } from "pg-boss";
import pg from "pg";
import { waitFor } from "../benchmark.js";

const WORKERS = 4;
const BATCH = 2500;
const CHUNK = 5000;

export const PGBOSS_CONFIG =
  `pg-boss 12: enqueue via boss.insert() in batches of ${CHUNK} into a fresh standard-policy queue per repetition; ` +
  `${WORKERS} × boss.work() each with batchSize ${BATCH}, burstWhenBatchFull (a full batch fetches again at once instead of waiting for the 0.5-s poll) and pollingIntervalSeconds 0.5, ` +
  `pool max 10, supervise/schedule off; no-op handler; completion is an UPDATE to state completed (tether and graphile-worker DELETE); drained = no row of the queue left before state completed`;

export async function pgBossStart(url: string): Promise<PgBoss> {
  const boss = new PgBoss({ connectionString: url, max: 10, supervise: false, schedule: false, migrate: true });
  boss.on("error", (err: unknown) => console.error(`[pg-boss] ${String(err)}`));
  await boss.start();
  return boss;
}

/**
 * Enqueues `n` no-op jobs into a new queue (its own partition), then runs workers until none
 * is left before "completed".
 */
export async function pgBossRound(boss: PgBoss, url: string, n: number, round: number, tune: { workers?: number; batch?: number } = {}): Promise<{ enqueueMs: number; drainMs: number }> {
  const QUEUE = `noop_${round}`;
  await boss.createQueue(QUEUE);
  const jobs = Array.from({ length: n }, (_, i) => ({ data: { id: String(i + 1) } }));
  const t0 = performance.now();
  for (let i = 0; i < n; i += CHUNK) await boss.insert(QUEUE, jobs.slice(i, i + CHUNK));
  const enqueueMs = performance.now() - t0;
  const c = new pg.Client({ connectionString: url });
  await c.connect();
  // Counted from its table: v12's queue counts are a cache its monitor refreshes.
  const open = async () => Number((await c.query<{ n: string }>("SELECT count(*) AS n FROM pgboss.job WHERE name = $1 AND state < 'completed'", [QUEUE])).rows[0]!.n);
  if ((await open()) !== n) throw new Error("pg-boss did not enqueue every job");
  // Autovacuum (and so auto-analyze) may be off on a benchmark server: give the planner the
  // statistics it would have in production, outside the timed part, as for every system here.
  await c.query("ANALYZE pgboss.job");

  const t1 = performance.now();
  for (let w = 0; w < (tune.workers ?? WORKERS); w++) await boss.work(QUEUE, { batchSize: tune.batch ?? BATCH, pollingIntervalSeconds: 0.5, burstWhenBatchFull: true }, async () => undefined);
  await waitFor(async () => (await open()) === 0, "pg-boss to complete every job", 600_000, 20).finally(() => c.end());
  const drainMs = performance.now() - t1;
  await boss.offWork(QUEUE);
  const v = new pg.Client({ connectionString: url });
  await v.connect();
  await v.query("VACUUM ANALYZE").finally(() => v.end());
  return { enqueueMs, drainMs };
}
