import { mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import autocannon from "autocannon";
import { annotations } from "@tether/annotations";
import type { ElasticsearchSink } from "@tether/elasticsearch";
import { resetIndex } from "../annotation-data.js";
import { startApiProcess, type ApiProcess } from "../api-process.js";
import type { Benchmark } from "../benchmark.js";
import { startHangingServer } from "../hanging-server.js";
import { compare, type Goal, type ResultRow } from "../report.js";
import { percentiles } from "../stats.js";
import type { WriteStageSums } from "../child/write-stage-collector.js";
import { formatWriteStages } from "../write-stages-note.js";

const CONNECTIONS = 50;
const DIRECT_SYNC_TIMEOUT_MS = 500;

interface LoadRun {
  writesPerSecond: number;
  p50: number;
  p99: number;
  non2xx: number;
}

let seq = 0;
const body = () => {
  const i = seq++;
  return JSON.stringify({ user: `acct:load${i % 100}@example.com`, uri: `https://example.com/load/${i % 1000}`, text: `load ${i}`, tags: ["load"] });
};

/** 50 connections of POST /api/annotations for `seconds` (autocannon, each request a fresh body). */
async function load(api: ApiProcess, seconds: number): Promise<LoadRun> {
  const r = await autocannon({
    url: `${api.url}/api/annotations`,
    connections: CONNECTIONS,
    duration: seconds,
    method: "POST",
    headers: { "content-type": "application/json" },
    requests: [{ setupRequest: (req) => ({ ...req, body: body() }) }],
  });
  return { writesPerSecond: r.requests.average, p50: r.latency.p50, p99: r.latency.p99, non2xx: r.non2xx + r.errors + r.timeouts };
}

/** How long a freshness sample waits for a search to find its write. */
const FRESHNESS_GIVE_UP_MS = 10_000;

/**
 * While `during` runs: one write at a time through the API, then the time until a search (not a
 * realtime get) finds it — what a user sees between "saved" and "searchable". A write whose
 * direct sync failed waits for a drainer, and none runs here: after FRESHNESS_GIVE_UP_MS it
 * counts as `unseen`, not as a sample.
 */
async function freshness(api: ApiProcess, sink: ElasticsearchSink, during: Promise<unknown>): Promise<{ samples: number[]; unseen: number }> {
  const samples: number[] = [];
  let unseen = 0;
  let running = true;
  void during.finally(() => (running = false));
  while (running) {
    const res = await fetch(`${api.url}/api/annotations`, { method: "POST", headers: { "content-type": "application/json" }, body: body() });
    const created = performance.now();
    if (res.status !== 201) continue;
    const { id } = (await res.json()) as { id: string };
    let seen = false;
    while (!seen && performance.now() - created < FRESHNESS_GIVE_UP_MS) {
      seen = (await sink.searchIds(annotations.index, { size: 1, _source: false, query: { ids: { values: [id] } } }, { timeoutMs: 5_000 })).ids.length > 0;
      if (!seen) await new Promise((r) => setTimeout(r, 5));
    }
    if (seen) samples.push(performance.now() - created);
    else unseen++;
    await new Promise((r) => setTimeout(r, 50));
  }
  return { samples, unseen };
}

export const apiLoad: Benchmark = {
  name: "load",
  title: "POST /api/annotations under 50 connections (autocannon): direct sync vs Postgres only, Elasticsearch hanging behind the open breaker, freshness",
  async run(scope) {
    const { loadSeconds: seconds, reps } = scope.sizes;
    const d = await scope.database();
    const sink = scope.sink();
    await resetIndex(sink, annotations.index);
    const hang = await startHangingServer();
    scope.defer(() => hang.close());
    const common = { DATABASE_URL: d.url, TETHER_INDEX_PREFIX: scope.indexPrefix, TETHER_DIRECT_SYNC_TIMEOUT_MS: String(DIRECT_SYNC_TIMEOUT_MS) };
    const settings = (await (await fetch(`${scope.env.esUrl}/${sink.indexName(annotations.index)}/_settings?include_defaults=true`)).json()) as Record<
      string,
      { settings?: { index?: { refresh_interval?: string } }; defaults?: { index?: { refresh_interval?: string } } }
    >;
    const entry = Object.values(settings)[0];
    const refresh = entry?.settings?.index?.refresh_interval ?? entry?.defaults?.index?.refresh_interval ?? "1s";
    const refreshMs = refresh.endsWith("ms") ? Number(refresh.slice(0, -2)) : Number(refresh.replace(/s$/, "")) * 1000;

    const per = { sync: [] as LoadRun[], pgOnly: [] as LoadRun[], hanging: [] as LoadRun[], freshnessLoad: [] as LoadRun[] };
    const stages = { sync: [] as WriteStageSums[], pgOnly: [] as WriteStageSums[] };
    const stageDir = await mkdtemp(join(tmpdir(), "tether-bench-load-"));
    scope.defer(() => rm(stageDir, { recursive: true, force: true }));
    /** One measured run in its own API process, with its write stages summed. */
    const measured = async (name: string, env: Record<string, string>): Promise<[LoadRun, WriteStageSums]> => {
      const stagesFile = join(stageDir, `${name}.json`);
      const api = await startApiProcess(env, { stagesFile });
      // Also when the run fails (the engine unreachable): a live API would keep the benchmark process from exiting.
      scope.defer(() => api.stop());
      const run = await load(api, seconds);
      await api.stop();
      return [run, JSON.parse(await readFile(stagesFile, "utf8")) as WriteStageSums];
    };
    const fresh: number[] = [];
    let unseen = 0;
    for (let rep = 0; rep < reps; rep++) {
      // The two compared runs carry the same load and nothing else: freshness is measured in a run of its own.
      const [sync, syncStages] = await measured(`sync-${rep}`, { ...common, ELASTICSEARCH_URL: scope.env.esUrl });
      per.sync.push(sync);
      stages.sync.push(syncStages);

      const [pgOnly, pgStages] = await measured(`pg-${rep}`, { ...common, ELASTICSEARCH_URL: scope.env.esUrl, TETHER_DIRECT_SYNC: "false" });
      per.pgOnly.push(pgOnly);
      stages.pgOnly.push(pgStages);

      const hanging = await startApiProcess({ ...common, ELASTICSEARCH_URL: hang.url });
      scope.defer(() => hanging.stop());
      // The writes before the breaker opens pay the timeout; measure once it is open.
      for (let i = 0; i < 10; i++) await fetch(`${hanging.url}/api/annotations`, { method: "POST", headers: { "content-type": "application/json" }, body: body() });
      const health = (await (await fetch(`${hanging.url}/healthz`)).json()) as { directSync?: { breaker?: string } };
      if (health.directSync?.breaker !== "open") throw new Error(`the breaker did not open: ${JSON.stringify(health)}`);
      per.hanging.push(await load(hanging, seconds));
      await hanging.stop();

      // Freshness under the same load: four samplers side by side, about 4 samples a refresh interval.
      const healthy = await startApiProcess({ ...common, ELASTICSEARCH_URL: scope.env.esUrl });
      scope.defer(() => healthy.stop());
      const run = load(healthy, seconds);
      const [freshnessLoad, samplers] = await Promise.all([run, Promise.all([0, 1, 2, 3].map(() => freshness(healthy, sink, run)))]);
      await healthy.stop();
      per.freshnessLoad.push(freshnessLoad);
      for (const s of samplers) {
        fresh.push(...s.samples);
        unseen += s.unseen;
      }
      scope.log(
        `rep ${rep + 1}: writes/s direct sync ${sync.writesPerSecond.toFixed(0)}, Postgres only ${pgOnly.writesPerSecond.toFixed(0)}, hanging ${per.hanging.at(-1)!.writesPerSecond.toFixed(0)}; p99 ${sync.p99} / ${pgOnly.p99} / ${per.hanging.at(-1)!.p99} ms`,
      );
    }
    const errors = [...per.sync, ...per.pgOnly, ...per.hanging, ...per.freshnessLoad].reduce((n, r) => n + r.non2xx, 0);
    const f = percentiles(fresh);
    /** A figure of the direct-sync runs against the same figure of the Postgres-only runs. */
    const againstPgOnly = (metric: string, unit: string, pick: (r: LoadRun) => number, goal: Goal, note: string) =>
      compare({
        bench: "load",
        metric,
        unit,
        better: goal.op === ">=" ? "higher" : "lower",
        tether: per.sync.map(pick),
        baselineName: "same route, Postgres only (TETHER_DIRECT_SYNC=false)",
        baseline: per.pgOnly.map(pick),
        goal,
        note,
      });
    const rows: ResultRow[] = [
      againstPgOnly(
        `writes/s, 50 connections, direct sync (goal ≥ 0.8× Postgres only)`,
        "writes/s",
        (r) => r.writesPerSecond,
        { op: ">=", value: 0.8 },
        `autocannon ${CONNECTIONS} connections × ${seconds} s per run, the API in its own process; non-2xx/errors over all runs: ${errors}. ` +
          `${formatWriteStages("Direct sync", stages.sync)}. ${formatWriteStages("Postgres only", stages.pgOnly)}`,
      ),
      againstPgOnly(
        `POST p99, 50 connections, direct sync (goal ≤ 1.2× Postgres only)`,
        "ms",
        (r) => r.p99,
        { op: "<=", value: 1.2 },
        `p50 ${per.sync.map((r) => r.p50).join(" / ")} ms against ${per.pgOnly.map((r) => r.p50).join(" / ")} ms`,
      ),
      compare({
        bench: "load",
        metric: "writes/s, Elasticsearch hanging, breaker open (goal ≥ 0.8× healthy)",
        unit: "writes/s",
        better: "higher",
        tether: per.hanging.map((r) => r.writesPerSecond),
        baselineName: "Elasticsearch healthy",
        baseline: per.sync.map((r) => r.writesPerSecond),
        goal: { op: ">=", value: 0.8 },
      }),
      compare({
        bench: "load",
        metric: "POST p99, Elasticsearch hanging, breaker open (goal ≤ 1.5× healthy)",
        unit: "ms",
        better: "lower",
        tether: per.hanging.map((r) => r.p99),
        baselineName: "Elasticsearch healthy",
        baseline: per.sync.map((r) => r.p99),
        goal: { op: "<=", value: 1.5 },
        note: `direct-sync timeout ${DIRECT_SYNC_TIMEOUT_MS} ms; 10 writes open the breaker before each measured run`,
      }),
      compare({
        bench: "load",
        metric: `freshness p99, 201 → found by search (goal ≤ refresh + 50 ms)`,
        unit: "ms",
        better: "lower",
        tether: [f.p99],
        baselineName: `refresh interval ${refresh} + 50 ms`,
        baseline: [refreshMs + 50],
        note:
          `${fresh.length} samples (${unseen} not found by a search within ${FRESHNESS_GIVE_UP_MS / 1000} s: a failed sync, left to a drainer) in a run of their own under the same load (${per.freshnessLoad.map((r) => r.writesPerSecond.toFixed(0)).join(" / ")} writes/s): ` +
          `p50 ${f.p50.toFixed(0)} ms, p99 ${f.p99.toFixed(0)} ms, mean ${(fresh.reduce((a, b) => a + b, 0) / Math.max(1, fresh.length)).toFixed(0)} ms; Sequin publishes 55 ms mean and 253 ms p99 from change to sink (its figure, not measured here)`,
      }),
    ];
    return { rows, info: { connections: CONNECTIONS, seconds, refreshInterval: refresh, freshness: f, runs: per, writeStages: stages } };
  },
};
