import { once } from "node:events";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Client } from "@elastic/elasticsearch";
import { createWriter, Drainer, evaluateAlerts, migrate, type DrainResult } from "@tether/core";
import { annotationMigrations, annotations } from "@tether/annotations";
import { ElasticsearchSink } from "@tether/elasticsearch";
import { createTestContext, startElasticsearchCluster, type ElasticsearchCluster, type TestContext } from "@tether/testkit";
import { buildApp } from "../../services/annotations-api/src/app.js";
import { auditAnnotations, auditSummary } from "@tether/testkit";
import { drainToEmpty } from "../scenarios/support/drain.js";
import { startLiveLoad, type LiveLoad } from "@tether/testkit";

const CLEAN = { lost: 0, stale: 0, duplicates: 0, jobs: 0, parked: 0 };
const figures: Record<string, unknown> = {};

/**
 * A 3-node Elasticsearch cluster of the test's own (one replica per shard) loses nodes under
 * API writes and a running drainer: a SIGKILL mid-drain, a rolling restart, a read-only block.
 * Each scenario ends with the audit clean: nothing missing, stale or resurrected.
 */
describe("a 3-node Elasticsearch cluster losing nodes", () => {
  let cluster: ElasticsearchCluster;
  let ctx: TestContext;
  let sink: ElasticsearchSink;
  let app: Awaited<ReturnType<typeof buildApp>>;
  let apiUrl: string;

  beforeAll(async () => {
    const t = performance.now();
    cluster = await startElasticsearchCluster({ size: 3 });
    figures.clusterStartSeconds = Math.round((performance.now() - t) / 1000);
    ctx = await createTestContext();
    await migrate(ctx.db, [annotationMigrations]);
    // Every node: the client fails over to a live one when a request meets a dead node.
    const client = new Client({ nodes: cluster.urls, maxRetries: 0, requestTimeout: 30_000 });
    sink = new ElasticsearchSink({ client, indexPrefix: ctx.indexPrefix, replicas: 1, requestTimeoutMs: 15_000, retries: 3 });
    await sink.ensureIndex(annotations.index, annotations.mappings);
    await cluster.waitForHealth("green");
    app = await buildApp({ db: ctx.db, sink, searchSink: sink, graceMs: 2_000, directSyncTimeoutMs: 500 });
    await app.listen({ port: 0, host: "127.0.0.1" });
    const address = app.server.address();
    apiUrl = `http://127.0.0.1:${typeof address === "object" && address ? address.port : 0}`;
  }, 900_000);
  afterAll(async () => {
    await app?.close();
    await sink?.close();
    await ctx?.close();
    await cluster?.close();
    process.stderr.write(`[cluster figures] ${JSON.stringify(figures)}\n`);
  }, 300_000);

  /** Runs `during` with API writes and a running drainer, then drains to empty and audits. */
  async function underLoad(name: string, during: (drainer: Drainer, load: LiveLoad) => Promise<void>) {
    const started = performance.now();
    const drainer = new Drainer({ db: ctx.db, sink, collections: [annotations], intervalMs: 500, batchSize: 50, deadlineMs: 20_000, backoff: { baseMs: 200, maxMs: 2_000 } });
    const passes = { passes: 0, failed: 0, retried: 0 };
    drainer.on("batch", (r: DrainResult) => {
      passes.passes += 1;
      if (r.error) passes.failed += 1;
      passes.retried += r.retried;
    });
    drainer.start();
    const load = startLiveLoad(apiUrl, { concurrency: 2, editEvery: 4, deleteEvery: 7 });
    try {
      await during(drainer, load);
    } finally {
      await load.stop();
      await drainer.stop();
    }
    await cluster.waitForHealth("green");
    await drainToEmpty(new Drainer({ db: ctx.db, sink, collections: [annotations] }), ctx.db, { timeoutMs: 300_000 });
    const audit = await auditAnnotations(ctx.db, sink);
    const statuses: Record<string, number> = {};
    for (const c of load.calls) statuses[c.status] = (statuses[c.status] ?? 0) + 1;
    figures[name] = { seconds: Math.round((performance.now() - started) / 1000), calls: load.calls.length, statuses, rows: audit.rows, drainer: passes, audit: auditSummary(audit) };
    return audit;
  }

  const callsReach = async (load: LiveLoad, n: number) => {
    while (load.calls.length < n) await new Promise((r) => setTimeout(r, 100));
  };

  it("a data node SIGKILLed in the middle of a drain and during API writes, then restarted", async () => {
    const audit = await underLoad("sigkill", async (drainer, load) => {
      await callsReach(load, 100);
      await once(drainer, "claimed");
      cluster.kill(1);
      await callsReach(load, load.calls.length + 150);
      await cluster.start(1);
    });
    expect(auditSummary(audit)).toEqual(CLEAN);
    expect(audit.rows).toBeGreaterThan(100);
    expect((await evaluateAlerts(ctx.db)).alerts.filter((a) => a.firing)).toEqual([]);
  }, 900_000);

  it("a rolling restart of all three nodes", async () => {
    const audit = await underLoad("rolling", async (_drainer, load) => {
      for (let i = 0; i < 3; i++) {
        await cluster.stop(i);
        await callsReach(load, load.calls.length + 60);
        await cluster.start(i);
        await cluster.waitForHealth("green");
      }
    });
    expect(auditSummary(audit)).toEqual(CLEAN);
    expect((await evaluateAlerts(ctx.db)).alerts.filter((a) => a.firing)).toEqual([]);
  }, 1_800_000);

  it("the index going read-only (the flood-stage block) and back: jobs wait and the lag alert fires, nothing parks", async () => {
    const index = sink.indexName(annotations.index);
    const block = (on: boolean) => sink.client.indices.putSettings({ index, settings: { "index.blocks.read_only_allow_delete": on ? true : null } });
    const writer = createWriter({ sink, graceMs: 0 });
    const drainer = new Drainer({ db: ctx.db, sink, collections: [annotations], backoff: { baseMs: 100, maxMs: 500 } });
    await block(true);
    let blocked: DrainResult | undefined;
    try {
      for (let i = 0; i < 20; i++) await writer.createWithJob(ctx.db, annotations, { userid: "acct:ro", target_uri: "https://example.com/ro", text: `ro ${i}` });
      blocked = await drainer.drainOnce();
      await new Promise((r) => setTimeout(r, 1_500));
      const during = await evaluateAlerts(ctx.db, { oldestDueJobMaxAgeSeconds: 1 });
      expect(during.alerts.find((a) => a.name === "oldest_due_job_too_old")?.firing).toBe(true);
      expect(during.alerts.find((a) => a.name === "parked_jobs")?.firing).toBe(false);
    } finally {
      await block(false);
    }
    expect(blocked).toMatchObject({ claimed: 20, retried: 20, parked: 0 });
    await drainToEmpty(drainer, ctx.db);
    const audit = await auditAnnotations(ctx.db, sink);
    expect(auditSummary(audit)).toEqual(CLEAN);
    expect((await evaluateAlerts(ctx.db, { oldestDueJobMaxAgeSeconds: 1 })).alerts.filter((a) => a.firing)).toEqual([]);
  }, 300_000);
});
