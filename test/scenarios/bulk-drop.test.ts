import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import type { EngineSink } from "@tether/search-sink";
import { startFaultProxy, type FaultProxy, type TestContext } from "@tether/testkit";
import { annotationBody, countRows, createAnnotationContext } from "./support/annotation-context.js";
import { auditAnnotations, auditSummary } from "@tether/testkit";
import { call, runConcurrent, scaled } from "@tether/testkit";
import { spawnService, stopAll, type ServiceProcess } from "./support/processes.js";
import { waitForProgress } from "@tether/testkit";

/**
 * Elasticsearch answers 200 OK while 10% of every bulk request's items were never indexed —
 * on the API's direct path and on the drainer's repairs alike. Only read-back catches it.
 * Runs once per sink (the vitest projects).
 */
// No wall-clock limit on the work: waits fail only when nothing progresses (waitForProgress);
// this bound is a guard against a hang, far above what a loaded 2-core machine needs.
const HANG_GUARD = { timeout: 1_800_000 };

describe("200 OK with a tenth of the bulk items silently dropped", HANG_GUARD, () => {
  const N = scaled(300, 50);
  let ctx: TestContext<EngineSink>;
  let apiProxy: FaultProxy | undefined;
  let drainerProxy: FaultProxy | undefined;
  let api: ServiceProcess | undefined;
  let drainer: ServiceProcess | undefined;

  beforeAll(async () => {
    ctx = await createAnnotationContext({ sink: "per-project" });
  });
  afterEach(async () => {
    await stopAll([api, drainer]);
    await apiProxy?.close();
    await drainerProxy?.close();
  });
  afterAll(() => ctx.close());

  it.each([
    { forge: false, how: "omitted from the answer" },
    { forge: true, how: "reported as created" },
  ])("converges to nothing missing or stale when the dropped items are $how", async ({ forge }) => {
    apiProxy = await startFaultProxy({ target: ctx.downstreamUrl });
    drainerProxy = await startFaultProxy({ target: ctx.downstreamUrl });
    const common = { DATABASE_URL: ctx.databaseUrl, TETHER_INDEX_PREFIX: ctx.indexPrefix };
    api = await spawnService("api", { ...common, ...ctx.serviceEnv(apiProxy.url), TETHER_GRACE_MS: "500" });
    await apiProxy.dropBulkItems(0.1, { forge });
    await drainerProxy.dropBulkItems(0.1, { forge });

    const creates = await runConcurrent(N, 8, (i) => call("POST", `${api!.url}/api/annotations`, annotationBody(i)));
    expect(creates.every((c) => c.status === 201)).toBe(true);
    const ids = creates.map((c) => String(c.body?.id));
    const edits = await runConcurrent(Math.floor(N / 5), 8, (i) => call("PATCH", `${api!.url}/api/annotations/${ids[i * 5]}`, { text: `edited ${i}` }));
    expect(edits.every((c) => c.status === 200)).toBe(true);
    const deletes = await runConcurrent(Math.floor(N / 10), 8, (i) => call("DELETE", `${api!.url}/api/annotations/${ids[i * 10 + 1]}`));
    expect(deletes.every((c) => c.status === 204)).toBe(true);

    // The drainer starts once the burst is over, so its first repair bulk carries every item
    // the direct path lost (dozens): a tenth of those is dropped again.
    drainer = await spawnService("drainer", { ...common, ...ctx.serviceEnv(drainerProxy.url), TETHER_DRAIN_INTERVAL_MS: "300" });

    await waitForProgress(() => countRows(ctx.db, "SELECT count(*) AS n FROM tether.job"), (n) => n === 0, { what: "the drainer to confirm every job through the lossy proxy" });
    console.log(
      `[bulk drop, forge=${forge}] direct path: ${apiProxy.stats.bulkItemsDropped}/${apiProxy.stats.bulkItems} items dropped; drainer: ${drainerProxy.stats.bulkItemsDropped}/${drainerProxy.stats.bulkItems} dropped`,
    );
    expect(apiProxy.stats.bulkItemsDropped).toBeGreaterThan(0);
    expect(drainerProxy.stats.bulkItemsDropped).toBeGreaterThan(0);
    expect(auditSummary(await auditAnnotations(ctx.db, ctx.sink))).toEqual({ lost: 0, stale: 0, duplicates: 0, jobs: 0, parked: 0 });
  });
});
