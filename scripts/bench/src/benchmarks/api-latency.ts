import { existsSync } from "node:fs";
import { fileURLToPath } from "node:url";
import type { Kysely } from "kysely";
import type { Sink } from "@tether/core";
import { annotations } from "@tether/annotations";
import { resetIndex } from "../annotation-data.js";
import { BenchmarkUnavailable, type Benchmark } from "../benchmark.js";
import { startHangingServer } from "../hanging-server.js";
import { NoopSink } from "../noop-sink.js";
import { compare, type ResultRow } from "../report.js";
import { percentiles } from "../stats.js";

const TIMEOUT_MS = 500;
const APP = new URL("../../../../services/annotations-api/src/app.ts", import.meta.url);

/** The slice of services/annotations-api's contract this benchmark uses. */
interface ApiApp {
  listen(opts: { port: number; host: string }): Promise<string>;
  close(): Promise<unknown>;
}
type BuildApp = (opts: { db: Kysely<any>; sink: Sink; directSyncTimeoutMs?: number }) => Promise<ApiApp>;

async function loadBuildApp(): Promise<BuildApp> {
  if (!existsSync(fileURLToPath(APP))) throw new BenchmarkUnavailable("services/annotations-api/src/app.ts does not exist yet");
  const mod = (await import(APP.href)) as { buildApp?: BuildApp };
  if (typeof mod.buildApp !== "function") throw new BenchmarkUnavailable("services/annotations-api/src/app.ts exports no buildApp");
  return mod.buildApp;
}

/** One POST /api/annotations over HTTP; returns its latency in ms. */
async function post(base: string, i: number): Promise<number> {
  const body = JSON.stringify({ user: `acct:api${i % 100}@example.com`, uri: `https://example.com/api/${i % 1000}`, text: `api benchmark ${i}`, tags: ["bench"] });
  const t = performance.now();
  const res = await fetch(`${base}/api/annotations`, { method: "POST", headers: { "content-type": "application/json" }, body });
  await res.arrayBuffer();
  const ms = performance.now() - t;
  if (res.status !== 201) throw new Error(`POST /api/annotations answered ${res.status}`);
  return ms;
}

export const apiLatency: Benchmark = {
  name: "api",
  title: "POST /api/annotations latency with Elasticsearch healthy and hanging",
  async run(scope) {
    const buildApp = await loadBuildApp();
    const { apiSamples: m, apiHangSamples: k, reps } = scope.sizes;
    const d = await scope.database();
    const sink = scope.sink();
    await resetIndex(sink, annotations.index);
    const hang = await startHangingServer();
    scope.defer(() => hang.close());
    const hungSink = scope.sink(hang.url);
    const listen = async (s: Sink) => {
      const app = await buildApp({ db: d.db, sink: s, directSyncTimeoutMs: TIMEOUT_MS });
      scope.defer(() => app.close());
      return app.listen({ port: 0, host: "127.0.0.1" });
    };
    const healthy = await listen(sink);
    const noop = await listen(new NoopSink());
    const hung = await listen(hungSink);

    let i = 0;
    for (let w = 0; w < 20; w++) {
      await post(healthy, i++);
      await post(noop, i++);
    }
    await post(hung, i++);
    const per = { healthy: [] as { p50: number; p99: number }[], noop: [] as { p50: number; p99: number }[], hung: [] as { p50: number; p99: number }[] };
    for (let rep = 0; rep < reps; rep++) {
      const h: number[] = [];
      const n: number[] = [];
      for (let s = 0; s < m; s++) {
        h.push(await post(healthy, i++));
        n.push(await post(noop, i++));
      }
      const x: number[] = [];
      for (let s = 0; s < k; s++) x.push(await post(hung, i++));
      per.healthy.push(percentiles(h));
      per.noop.push(percentiles(n));
      per.hung.push(percentiles(x));
      scope.log(`rep ${rep + 1}: p50 healthy ${per.healthy.at(-1)!.p50.toFixed(1)} ms, no-op sink ${per.noop.at(-1)!.p50.toFixed(1)} ms, hanging ${per.hung.at(-1)!.p50.toFixed(0)} ms`);
    }
    const rows: ResultRow[] = [];
    for (const p of ["p50", "p99"] as const) {
      rows.push(
        compare({
          bench: "8 api",
          metric: `POST, Elasticsearch healthy, ${p}`,
          unit: "ms",
          better: "lower",
          tether: per.healthy.map((x) => x[p]),
          baselineName: "same app, no-op sink",
          baseline: per.noop.map((x) => x[p]),
          ...(p === "p50" ? { note: `buildApp() listening on port 0, sequential HTTP requests (fetch, keep-alive); ${m} requests per repetition, interleaved with the no-op-sink app` } : {}),
        }),
      );
    }
    for (const p of ["p50", "p99"] as const) {
      rows.push(
        compare({
          bench: "8 api",
          metric: `POST, Elasticsearch hanging, ${p}`,
          unit: "ms",
          better: "lower",
          tether: per.hung.map((x) => x[p]),
          baselineName: "direct-sync timeout",
          baseline: per.hung.map(() => TIMEOUT_MS),
          ...(p === "p50" ? { note: `the sink points at a TCP server that accepts and never answers; ${k} requests per repetition (p99 of ${k} is close to the max); every request still answered 201` } : {}),
        }),
      );
    }
    return { rows, info: { samplesPerRep: m, hangingSamplesPerRep: k, directSyncTimeoutMs: TIMEOUT_MS } };
  },
};
