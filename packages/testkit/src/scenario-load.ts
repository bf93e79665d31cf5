/** Scenario sizes: CI runs scale 1; TETHER_SCENARIO_SCALE=10 runs the full-size figures by hand. */
export const SCALE = Number(process.env.TETHER_SCENARIO_SCALE ?? "1") > 0 ? Number(process.env.TETHER_SCENARIO_SCALE ?? "1") : 1;

export function scaled(n: number, min = 1): number {
  return Math.max(min, Math.round(n * SCALE));
}

/** Runs `fn(0..n-1)` with at most `concurrency` in flight; results in index order. */
export async function runConcurrent<T>(n: number, concurrency: number, fn: (i: number) => Promise<T>): Promise<T[]> {
  const out = new Array<T>(n);
  let next = 0;
  const worker = async () => {
    for (let i = next++; i < n; i = next++) out[i] = await fn(i);
  };
  await Promise.all(Array.from({ length: Math.min(concurrency, n) }, worker));
  return out;
}

export function percentile(values: readonly number[], p: number): number {
  if (values.length === 0) return Number.NaN;
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)]!;
}

export interface Call {
  status: number;
  ms: number;
  body: Record<string, unknown> | undefined;
  /** Set when the request failed without an HTTP answer. */
  error?: string;
}

/** One JSON HTTP call, timed. Never throws: a transport failure is status 0. */
export async function call(method: string, url: string, body?: unknown, headers: Record<string, string> = {}): Promise<Call> {
  const started = performance.now();
  try {
    const res = await fetch(url, {
      method,
      headers: { ...(body === undefined ? {} : { "content-type": "application/json" }), ...headers },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
      signal: AbortSignal.timeout(30_000),
    });
    const text = await res.text();
    let parsed: Record<string, unknown> | undefined;
    try {
      parsed = text ? (JSON.parse(text) as Record<string, unknown>) : undefined;
    } catch {
      parsed = { raw: text };
    }
    return { status: res.status, ms: performance.now() - started, body: parsed };
  } catch (err) {
    return { status: 0, ms: performance.now() - started, body: undefined, error: String(err) };
  }
}

export function latencySummary(ms: readonly number[]): { n: number; p50: number; p99: number; max: number } {
  const r = (x: number) => Math.round(x * 10) / 10;
  return { n: ms.length, p50: r(percentile(ms, 50)), p99: r(percentile(ms, 99)), max: r(Math.max(...ms)) };
}

export interface LiveLoad {
  /** Every call so far, in completion order. */
  readonly calls: Call[];
  /** Ids of annotations created so far. */
  readonly ids: string[];
  /** Resolves once `max` calls are done (or after `stop`). */
  readonly done: Promise<void>;
  /** Stops issuing calls; resolves when the in-flight ones are done. */
  stop(): Promise<void>;
}

/**
 * Keeps `concurrency` writers busy against the API until stopped: creates, and (every
 * `editEvery`-th call) an edit of an earlier annotation, (every `deleteEvery`-th) a delete.
 */
export function startLiveLoad(baseUrl: string, opts: { concurrency?: number; editEvery?: number; deleteEvery?: number; max?: number } = {}): LiveLoad {
  const calls: Call[] = [];
  const ids: string[] = [];
  let stopping = false;
  let n = 0;
  const worker = async () => {
    while (!stopping && (opts.max === undefined || n < opts.max)) {
      const i = n++;
      let c: Call;
      if (opts.deleteEvery && i % opts.deleteEvery === opts.deleteEvery - 1 && ids.length > 10) {
        c = await call("DELETE", `${baseUrl}/api/annotations/${ids.splice(Math.floor(Math.random() * ids.length), 1)[0]}`);
      } else if (opts.editEvery && i % opts.editEvery === opts.editEvery - 1 && ids.length > 0) {
        c = await call("PATCH", `${baseUrl}/api/annotations/${ids[Math.floor(Math.random() * ids.length)]}`, { text: `edit ${i}` });
      } else {
        c = await call("POST", `${baseUrl}/api/annotations`, { uri: `https://example.com/live/${i % 17}`, text: `live ${i}`, user: `acct:live${i % 5}@example.com` });
        if (c.status === 201) ids.push(String(c.body?.id));
      }
      calls.push(c);
    }
  };
  const running = Promise.all(Array.from({ length: opts.concurrency ?? 4 }, worker)).then(() => undefined);
  return {
    calls,
    ids,
    done: running,
    async stop() {
      stopping = true;
      await running;
    },
  };
}
