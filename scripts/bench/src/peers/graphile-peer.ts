import pg from "pg";
import { Logger, run, runMigrations } from "graphile-worker";
import { waitFor } from "../benchmark.js";

const CONCURRENCY = 24;
const POOL = 25;
const CHUNK = 5000;
/** The local queue of graphile-worker's own performance figures, and a larger one. */
export const GRAPHILE_LOCAL_QUEUES = [500, 2000] as const;

/** The configuration, printed with the results. */
export const GRAPHILE_CONFIG =
  `graphile-worker 0.18: enqueue via SQL graphile_worker.add_jobs(job_spec[]) in batches of ${CHUNK}; ` +
  `run() with preset.worker { concurrentJobs ${CONCURRENCY}, maxPoolSize ${POOL}, localQueue { size ${GRAPHILE_LOCAL_QUEUES.join(" or ")} }, completeJobBatchDelay 0, failJobBatchDelay 0 } ` +
  `(its documented performance setting; localQueue and the batch delays take effect only under preset.worker), pollInterval 100 ms; no-op task; ` +
  `drained = graphile_worker._private_jobs empty (its job:complete fires before the batched completion commits)`;

const silent = new Logger(() => () => undefined);

export async function graphileInstall(url: string): Promise<void> {
  await runMigrations({ connectionString: url, logger: silent });
}

/** Enqueues `n` no-op jobs, then runs a worker pool until all have completed. */
export async function graphileRound(url: string, n: number, tune: { localQueue?: number } = {}): Promise<{ enqueueMs: number; drainMs: number }> {
  const specs = Array.from({ length: n }, (_, i) => ({ identifier: "noop", payload: { id: String(i + 1) } }));
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  const left = async () => Number((await client.query<{ n: string }>("SELECT count(*) AS n FROM graphile_worker._private_jobs")).rows[0]!.n);
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

    const t1 = performance.now();
    const runner = await run({
      connectionString: url,
      noHandleSignals: true,
      logger: silent,
      taskList: { noop: async () => undefined },
      preset: {
        worker: {
          concurrentJobs: CONCURRENCY,
          maxPoolSize: POOL,
          pollInterval: 100,
          localQueue: { size: tune.localQueue ?? GRAPHILE_LOCAL_QUEUES[0] },
          completeJobBatchDelay: 0,
          failJobBatchDelay: 0,
        },
      },
    });
    try {
      await waitFor(async () => (await left()) === 0, "graphile-worker to empty its job table", 600_000, 20);
    } finally {
      await runner.stop();
    }
    const drainMs = performance.now() - t1;
    await client.query("VACUUM ANALYZE");
    return { enqueueMs, drainMs };
  } finally {
    await client.end();
  }
}
