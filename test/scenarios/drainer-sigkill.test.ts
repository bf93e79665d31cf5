import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startFaultProxy, type FaultProxy, type TestContext } from "@tether/testkit";
import { countRows, createAnnotationContext } from "./support/annotation-context.js";
import { auditAnnotations, auditSummary } from "@tether/testkit";
import { scaled, startLiveLoad } from "@tether/testkit";
import { backends, claimability, openClaims } from "./support/locks.js";
import { spawnService, stopAll, type ServiceProcess } from "./support/processes.js";
import { waitFor, waitForProgress } from "@tether/testkit";

/**
 * The drainer process is SIGKILLed in the middle of a batch — its claim transaction open, an
 * Elasticsearch call in flight — again and again while users keep writing. Postgres releases
 * its row locks with the dead connection: nothing is lost, nothing stays claimed.
 */
// No wall-clock limit on the work: waits fail only when nothing progresses (waitForProgress);
// this bound is a guard against a hang, far above what a loaded 2-core machine needs.
const HANG_GUARD = { timeout: 1_800_000 };

describe("the drainer killed with SIGKILL mid-batch, repeatedly, under live writes", HANG_GUARD, () => {
  const KILLS = scaled(4, 2);
  let ctx: TestContext;
  let apiProxy: FaultProxy;
  let drainerProxy: FaultProxy;
  let api: ServiceProcess | undefined;
  let drainer: ServiceProcess | undefined;

  beforeAll(async () => {
    ctx = await createAnnotationContext();
    apiProxy = await startFaultProxy({ target: ctx.elasticsearchUrl });
    drainerProxy = await startFaultProxy({ target: ctx.elasticsearchUrl });
  });
  afterAll(async () => {
    await stopAll([api, drainer]);
    await apiProxy.close();
    await drainerProxy.close();
    await ctx.close();
  });

  it("loses nothing and leaves no job claimed or stuck", async () => {
    const common = { DATABASE_URL: ctx.databaseUrl, TETHER_INDEX_PREFIX: ctx.indexPrefix };
    const drainerEnv = { ...common, ELASTICSEARCH_URL: drainerProxy.url, TETHER_DRAIN_INTERVAL_MS: "200", TETHER_BATCH_SIZE: "50" };
    api = await spawnService("api", { ...common, ELASTICSEARCH_URL: apiProxy.url, TETHER_GRACE_MS: "0" });
    // Direct syncs fail fast, so every write is the drainer's work; the drainer's Elasticsearch
    // calls are slow, so a batch is open long enough to be killed inside.
    await apiProxy.setMode("refuse");
    await drainerProxy.setMode({ kind: "latency", ms: 400 });
    const load = startLiveLoad(api.url, { concurrency: 2, editEvery: 5, deleteEvery: 9 });

    const heldAtKill: number[] = [];
    for (let k = 0; k < KILLS; k++) {
      drainer = await spawnService("drainer", drainerEnv);
      // Mid-batch: an Elasticsearch call in flight while jobs are claimed, seen in one probe (an
      // open claim transaction alone may be a pass that claimed nothing, or one about to commit).
      let held = 0;
      await waitFor(async () => {
        if (drainerProxy.stats.pendingDelayed === 0 || (await openClaims(ctx.db)) === 0) return false;
        const { total, claimable } = await claimability(ctx.db);
        held = total - claimable;
        return held > 0 && drainerProxy.stats.pendingDelayed > 0;
      }, { what: "the drainer to be mid-batch", timeoutMs: 60_000, intervalMs: 20 });
      heldAtKill.push(held);
      await drainer.kill();
      // Postgres notices the dead connection and rolls its transaction back: every job is claimable again.
      await waitFor(async () => (await backends(ctx.db)) === 0, { what: "the killed drainer's backends to go away", timeoutMs: 60_000 });
      expect(await openClaims(ctx.db)).toBe(0);
      await waitFor(async () => {
        const after = await claimability(ctx.db);
        return after.claimable === after.total;
      }, { what: "every job to be claimable again", timeoutMs: 60_000 });
    }
    await load.stop();
    console.log(`[sigkill] ${KILLS} kills, jobs claimed at each kill: ${JSON.stringify(heldAtKill)}; live calls: ${load.calls.length}, creates: ${load.ids.length}`);
    expect(heldAtKill.every((n) => n > 0)).toBe(true);
    expect(load.calls.filter((c) => c.status === 0 || c.status >= 500)).toEqual([]);

    // Elasticsearch heals for everyone; one last drainer finishes the work.
    await apiProxy.setMode("pass");
    await drainerProxy.setMode("pass");
    drainer = await spawnService("drainer", { ...drainerEnv, TETHER_BATCH_SIZE: "2500" });
    await waitForProgress(() => countRows(ctx.db, "SELECT count(*) AS n FROM tether.job"), (n) => n === 0, { what: "the queue to drain" });
    expect(auditSummary(await auditAnnotations(ctx.db, ctx.sink))).toEqual({ lost: 0, stale: 0, duplicates: 0, jobs: 0, parked: 0 });
    expect((await drainer.stop()).code).toBe(0);
  });
});
