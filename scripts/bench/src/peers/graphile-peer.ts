import pg from "pg";
import { Logger, run, runMigrations } from "graphile-worker";

const CONCURRENCY = 24;
const POOL = 25;
const CHUNK = 5000;

/** The configuration, printed with the results. */
export const GRAPHILE_CONFIG =
  `graphile-worker 0.18: enqueue via SQL graphile_worker.add_jobs(job_spec[]) in batches of ${CHUNK}; ` +
  `run() with concurrency ${CONCURRENCY}, maxPoolSize ${POOL} (their performance-test setting; 16–40 measured alike here; 0.16 has no localQueue/batched completion), ` +
  `pollInterval 100 ms, LISTEN/NOTIFY on, prepared statements on; no-op task`;

const silent = new Logger(() => () => undefined);

export async function graphileInstall(url: string): Promise<void> {
  await runMigrations({ connectionString: url, logger: silent });
}

/** Enqueues `n` no-op jobs, then runs a worker pool until all have completed. */
export async function graphileRound(url: string, n: number, tune: { concurrency?: number; pool?: number } = {}): Promise<{ enqueueMs: number; drainMs: number }> {
  const specs = Array.from({ length: n }, (_, i) => ({ identifier: "noop", payload: { id: String(i + 1) } }));
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    const t0 = performance.now();
    for (let i = 0; i < n; i += CHUNK) {
      await client.query(
        `SELECT count(*) FROM graphile_worker.add_jobs(ARRAY(SELECT json_populate_record(null::graphile_worker.job_spec, x) FROM json_array_elements($1::json) AS x))`,
        [JSON.stringify(specs.slice(i, i + CHUNK))],
      );
    }
    const enqueueMs = performance.now() - t0;
    await client.query("ANALYZE graphile_worker._private_jobs");

    let done = 0;
    let finish: () => void = () => undefined;
    const allDone = new Promise<void>((resolve) => (finish = resolve));
    const t1 = performance.now();
    const runner = await run({
      connectionString: url,
      concurrency: tune.concurrency ?? CONCURRENCY,
      maxPoolSize: tune.pool ?? POOL,
      pollInterval: 100,
      noHandleSignals: true,
      logger: silent,
      taskList: { noop: async () => undefined },
    });
    runner.events.on("job:complete", () => {
      if (++done === n) finish();
    });
    const timeout = setTimeout(() => finish(), 600_000);
    await allDone;
    const drainMs = performance.now() - t1;
    clearTimeout(timeout);
    await runner.stop();
    const left = await client.query<{ n: string }>("SELECT count(*) AS n FROM graphile_worker._private_jobs");
    if (done !== n || Number(left.rows[0]!.n) !== 0) throw new Error(`graphile-worker completed ${done}/${n}, ${left.rows[0]!.n} left`);
    await client.query("VACUUM ANALYZE");
    return { enqueueMs, drainMs };
  } finally {
    await client.end();
  }
}
