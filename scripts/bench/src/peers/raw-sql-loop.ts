import pg from "pg";

const CHUNK = 5000;
const BATCH = 2500;
/** Loops side by side, as many as the tether drainer's passes. */
export const RAW_LOOPS = 2;

/** The configuration, printed with the results. */
export const RAW_CONFIG =
  `the physical limit: a copy of tether.job's shape (LIKE … INCLUDING ALL: columns, defaults, indexes; no triggers) filled by INSERT … SELECT unnest() in batches of ${CHUNK}, ` +
  `drained by ${RAW_LOOPS} connections each looping DELETE … WHERE id IN (SELECT id … WHERE scheduled_at <= now() AND expires_at > now() ORDER BY priority, scheduled_at, id LIMIT ${BATCH} FOR UPDATE SKIP LOCKED) until it deletes nothing; ` +
  `no row is loaded, nothing is verified, nothing is recorded`;

/** Creates the raw table next to tether.job in the same database. */
export async function rawInstall(url: string): Promise<void> {
  const c = new pg.Client({ connectionString: url });
  await c.connect();
  try {
    await c.query("CREATE TABLE bench_raw_job (LIKE tether.job INCLUDING ALL)");
  } finally {
    await c.end();
  }
}

/** Enqueues `n` jobs into the raw table, then deletes them all, 2500 at a time. */
export async function rawRound(url: string, n: number, name: string): Promise<{ enqueueMs: number; drainMs: number }> {
  const clients = Array.from({ length: RAW_LOOPS }, () => new pg.Client({ connectionString: url }));
  await Promise.all(clients.map((c) => c.connect()));
  try {
    const [first] = clients;
    const t0 = performance.now();
    for (let from = 1; from <= n; from += CHUNK) {
      const ids = Array.from({ length: Math.min(CHUNK, n - from + 1) }, (_, i) => String(from + i));
      await first!.query(
        `INSERT INTO bench_raw_job (name, scheduled_at, priority, tag, kwargs)
         SELECT $1, now(), 1, 'live', jsonb_build_object('id', e) FROM unnest($2::text[]) AS e`,
        [name, ids],
      );
    }
    const enqueueMs = performance.now() - t0;
    await first!.query("ANALYZE bench_raw_job");
    const t1 = performance.now();
    let deleted = 0;
    await Promise.all(
      clients.map(async (c) => {
        for (;;) {
          const r = await c.query(
            `DELETE FROM bench_raw_job WHERE id IN (
               SELECT id FROM bench_raw_job WHERE scheduled_at <= now() AND expires_at > now()
               ORDER BY priority, scheduled_at, id LIMIT ${BATCH} FOR UPDATE SKIP LOCKED)`,
          );
          deleted += r.rowCount ?? 0;
          if (r.rowCount === 0) return;
        }
      }),
    );
    const drainMs = performance.now() - t1;
    if (deleted !== n) throw new Error(`the raw loop deleted ${deleted}/${n}`);
    await first!.query("VACUUM ANALYZE bench_raw_job");
    return { enqueueMs, drainMs };
  } finally {
    await Promise.all(clients.map((c) => c.end()));
  }
}
