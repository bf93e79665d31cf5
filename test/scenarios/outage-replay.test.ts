import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { EngineSink } from "@tether/search-sink";
import { startFaultProxy, type FaultProxy, type TestContext } from "@tether/testkit";
import { annotationBody, countRows, createAnnotationContext } from "./support/annotation-context.js";
import { auditAnnotations, auditSummary } from "@tether/testkit";
import { call, latencySummary, runConcurrent, scaled } from "@tether/testkit";
import { spawnService, stopAll, type ServiceProcess } from "./support/processes.js";
import { waitForProgress } from "@tether/testkit";

/**
 * The outage of the seed story, replayed: Elasticsearch accepts connections and never answers
 * while users keep writing. Every write must still succeed promptly, and once Elasticsearch
 * is back and the drainer has run, every committed annotation is there, at its version.
 * Runs once per sink (the vitest projects).
 */
// No wall-clock limit on the work: waits fail only when nothing progresses (waitForProgress);
// this bound is a guard against a hang, far above what a loaded 2-core machine needs.
const HANG_GUARD = { timeout: 1_800_000 };

describe("the outage replayed: Elasticsearch hangs while the API takes writes", HANG_GUARD, () => {
  const N = scaled(400, 50);
  let ctx: TestContext<EngineSink>;
  let proxy: FaultProxy;
  let api: ServiceProcess | undefined;
  let drainer: ServiceProcess | undefined;

  beforeAll(async () => {
    ctx = await createAnnotationContext({ sink: "per-project" });
    proxy = await startFaultProxy({ target: ctx.downstreamUrl });
  });
  afterAll(async () => {
    await stopAll([api, drainer]);
    await proxy.close();
    await ctx.close();
  });

  it("answers every write with 201 while Elasticsearch answers nothing, then the drainer leaves nothing missing or stale", async () => {
    api = await spawnService("api", {
      DATABASE_URL: ctx.databaseUrl,
      ...ctx.serviceEnv(proxy.url),
      TETHER_INDEX_PREFIX: ctx.indexPrefix,
      TETHER_DIRECT_SYNC_TIMEOUT_MS: "500",
      TETHER_GRACE_MS: "1000",
    });
    await proxy.setMode("hang");
    const passedBefore = proxy.stats.passed;

    const writeStarted = performance.now();
    const writes = await runConcurrent(N, 16, (i) => call("POST", `${api!.url}/api/annotations`, annotationBody(i)));
    // A quarter of them edited too, while Elasticsearch is still down.
    const edited = writes.filter((_, i) => i % 4 === 0).map((w) => String(w.body?.id));
    const edits = await runConcurrent(edited.length, 16, (i) => call("PATCH", `${api!.url}/api/annotations/${edited[i]}`, { text: `edited ${i}` }));

    const latency = latencySummary(writes.map((w) => w.ms));
    console.log(`[outage replay] ${N} creates + ${edited.length} edits while Elasticsearch hung: latency ms ${JSON.stringify(latency)}, requests hung at the proxy: ${proxy.stats.hung}, write phase ${Math.round(performance.now() - writeStarted)} ms`);
    expect(writes.every((w) => w.status === 201)).toBe(true);
    expect(edits.every((w) => w.status === 200)).toBe(true);
    // Every answer came while Elasticsearch answered nothing: no write waited on it (the latency
    // figures above are reported, not asserted: a loaded machine must not fail on wall time).
    expect(proxy.stats.hung).toBeGreaterThan(0);
    expect(proxy.stats.passed).toBe(passedBefore);
    expect(await countRows(ctx.db, "SELECT count(*) AS n FROM annotation")).toBe(N);
    expect(await countRows(ctx.db, "SELECT count(*) AS n FROM tether.job")).toBe(N + edited.length);

    // Elasticsearch comes back; the drainer runs.
    await proxy.setMode("pass");
    drainer = await spawnService("drainer", {
      DATABASE_URL: ctx.databaseUrl,
      ...ctx.serviceEnv(proxy.url),
      TETHER_INDEX_PREFIX: ctx.indexPrefix,
      TETHER_DRAIN_INTERVAL_MS: "300",
    });
    const drainStarted = performance.now();
    await waitForProgress(() => countRows(ctx.db, "SELECT count(*) AS n FROM tether.job"), (n) => n === 0, { what: "the drainer to empty the queue" });
    console.log(`[outage replay] drainer (spawned) emptied ${N + edited.length} jobs in ${Math.round(performance.now() - drainStarted)} ms`);

    const audit = await auditAnnotations(ctx.db, ctx.sink);
    expect(audit.rows).toBe(N);
    expect(auditSummary(audit)).toEqual({ lost: 0, stale: 0, duplicates: 0, jobs: 0, parked: 0 });
    expect((await drainer.stop()).code).toBe(0);
  });
});
