import pg from "pg";

/** One statement a live writer may run; `pick` draws its parameters. */
export interface LiveWrite {
  text: string;
  params?: (random: () => number) => unknown[];
}

export interface LiveWritersOptions {
  connectionString: string;
  /** Writers, each on its own connection (not a pool: every wait is the statement's own). Default 3. */
  writers?: number;
  /** Statements drawn at random by each writer, back to back. */
  writes: readonly LiveWrite[];
  /** Pause between a writer's statements. Default 2 ms. */
  pauseMs?: number;
}

export interface LiveWritersStats {
  /** Statements that committed. */
  ok: number;
  /** Statements that failed, with their first messages. */
  failed: number;
  errors: string[];
  /** Longest time one statement took, from send to result: what a locked-out writer waited. */
  maxWaitMs: number;
  /** Median statement time. */
  p50Ms: number;
  p99Ms: number;
}

export interface LiveWriters {
  /** Statements committed so far (grows while the writers run). */
  readonly ok: number;
  /** Stops the writers after their statement in flight and closes their connections. */
  stop(): Promise<LiveWritersStats>;
}

/**
 * Application traffic for tests and benchmarks that change a table under load (adoption, DDL):
 * N connections issuing autocommit statements back to back and timing each one.
 *
 * @example
 * const load = await startLiveWriters({ connectionString, writes: [{ text: "UPDATE t SET n = n + 1 WHERE id = $1", params: (r) => [1 + Math.floor(r() * 1000)] }] });
 * …
 * const { maxWaitMs, failed } = await load.stop();
 */
export async function startLiveWriters(opts: LiveWritersOptions): Promise<LiveWriters> {
  const clients = await Promise.all(
    Array.from({ length: opts.writers ?? 3 }, async () => {
      const c = new pg.Client({ connectionString: opts.connectionString, application_name: "tether-live-writer" });
      c.on("error", () => undefined);
      await c.connect();
      return c;
    }),
  );
  const durations: number[] = [];
  const errors: string[] = [];
  let ok = 0;
  let failed = 0;
  let stopping = false;
  const loops = clients.map(async (client) => {
    while (!stopping) {
      const w = opts.writes[Math.floor(Math.random() * opts.writes.length)]!;
      const t = performance.now();
      try {
        await client.query(w.text, w.params?.(Math.random) ?? []);
        ok += 1;
      } catch (err) {
        failed += 1;
        if (errors.length < 5) errors.push(err instanceof Error ? err.message : String(err));
      }
      durations.push(performance.now() - t);
      await new Promise((r) => setTimeout(r, opts.pauseMs ?? 2));
    }
  });
  return {
    get ok() {
      return ok;
    },
    async stop() {
      stopping = true;
      await Promise.all(loops);
      await Promise.all(clients.map((c) => c.end().catch(() => undefined)));
      const sorted = [...durations].sort((a, b) => a - b);
      const at = (q: number) => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? 0;
      return { ok, failed, errors, maxWaitMs: sorted.at(-1) ?? 0, p50Ms: at(0.5), p99Ms: at(0.99) };
    },
  };
}
