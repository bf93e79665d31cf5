import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { verifyCollection } from "@tether/core";
import type { EngineSink } from "@tether/search-sink";
import { startFaultProxy, type FaultProxy, type TestContext } from "@tether/testkit";
import { annotationBody, annotations, countRows, createAnnotationContext } from "./support/annotation-context.js";
import { auditAnnotations, auditSummary } from "@tether/testkit";
import { call, runConcurrent, scaled } from "@tether/testkit";
import { spawnService, stopAll, type ServiceProcess } from "./support/processes.js";
import { waitFor, waitForProgress } from "@tether/testkit";

/**
 * Deletes race edits, and the API's direct syncs reach Elasticsearch late and out of order
 * (random delays longer than the direct-sync timeout): an edit's or a create's write regularly
 * lands after the delete's tombstone. None may bring a deleted annotation back.
 * Runs once per sink (the vitest projects).
 */
// No wall-clock limit on the work: waits fail only when nothing progresses (waitForProgress);
// this bound is a guard against a hang, far above what a loaded 2-core machine needs.
const HANG_GUARD = { timeout: 1_800_000 };

describe("deletes racing edits and late direct syncs", HANG_GUARD, () => {
  const N = scaled(150, 30);
  let ctx: TestContext<EngineSink>;
  let apiEs: FaultProxy;
  let api: ServiceProcess | undefined;
  let drainer: ServiceProcess | undefined;

  beforeAll(async () => {
    ctx = await createAnnotationContext({ sink: "per-project" });
    apiEs = await startFaultProxy({ target: ctx.downstreamUrl });
  });
  afterAll(async () => {
    await stopAll([api, drainer]);
    await apiEs.close();
    await ctx.close();
  });

  it("never shows a deleted annotation again, in search or as a live document", async () => {
    const common = { DATABASE_URL: ctx.databaseUrl, TETHER_INDEX_PREFIX: ctx.indexPrefix };
    [api, drainer] = await Promise.all([
      spawnService("api", { ...common, ...ctx.serviceEnv(apiEs.url), TETHER_GRACE_MS: "300", TETHER_BREAKER_FAILURES: "0" }),
      spawnService("drainer", { ...common, ...ctx.serviceEnv(), TETHER_DRAIN_INTERVAL_MS: "200" }),
    ]);
    // No circuit breaker: it would open after a few timed-out direct syncs and stop sending them,
    // and the late writes this test is about would not happen.
    await apiEs.setMode({ kind: "latency", ms: 50, jitterMs: 1_500 });
    let refusedLate = 0;
    apiEs.observeBulk((e) => (refusedLate += e.items.filter((i) => i.status === 409).length));

    // Watch every deleted id: once Elasticsearch holds its tombstone, a live document must never reappear.
    const deleted = new Set<string>();
    const tombstoned = new Set<string>();
    const resurrected = new Set<string>();
    let watching = true;
    const watcher = (async () => {
      while (watching) {
        const ids = [...deleted];
        if (ids.length > 0) {
          const states = await ctx.sink.fetchStates(annotations.index, ids);
          for (const id of ids) {
            const s = states.get(id);
            if (s?.deleted) tombstoned.add(id);
            else if (s && tombstoned.has(id)) resurrected.add(id);
          }
        }
        await new Promise((r) => setTimeout(r, 50));
      }
    })();

    const creates = await runConcurrent(N, 8, (i) => call("POST", `${api!.url}/api/annotations`, annotationBody(i, "acct:racer@example.com")));
    expect(creates.every((c) => c.status === 201)).toBe(true);
    const ids = creates.map((c) => String(c.body?.id));
    // Two thirds are deleted while two edits race the delete; the rest are only edited.
    const outcomes = await runConcurrent(N, 8, async (i) => {
      const id = ids[i]!;
      const edit = (k: number) => call("PATCH", `${api!.url}/api/annotations/${id}`, { text: `race ${i}.${k}` });
      if (i % 3 === 2) return { id, deleted: false, calls: [await edit(0), await edit(1)] };
      const calls = await Promise.all([edit(0), call("DELETE", `${api!.url}/api/annotations/${id}`), edit(1)]);
      if (calls[1]!.status === 204) deleted.add(id);
      return { id, deleted: calls[1]!.status === 204, calls };
    });
    // Created and deleted at once: the create's late write lands after the tombstone.
    const quick = await runConcurrent(scaled(30, 10), 8, async (i) => {
      const c = await call("POST", `${api!.url}/api/annotations`, annotationBody(1000 + i, "acct:racer@example.com"));
      const d = await call("DELETE", `${api!.url}/api/annotations/${String(c.body?.id)}`);
      if (d.status === 204) deleted.add(String(c.body?.id));
      return [c, d];
    });
    const all = [...outcomes.flatMap((o) => o.calls), ...quick.flat()];
    // An edit that lost the race to the delete is a clean 404; nothing else may fail.
    expect(all.filter((c) => ![200, 201, 204, 404].includes(c.status))).toEqual([]);

    await waitFor(() => apiEs.stats.pendingDelayed === 0, { what: "every late direct sync to land", timeoutMs: 60_000 });
    await waitForProgress(() => countRows(ctx.db, "SELECT count(*) AS n FROM tether.job"), (n) => n === 0, { what: "the queue to drain" });
    watching = false;
    await watcher;

    const late = apiEs.stats.delayed;
    console.log(`[delete race] ${deleted.size} deleted of ${N + quick.length}; ${late} direct-sync requests delayed by up to 1.55 s; ${refusedLate} late writes refused as older; tombstones observed ${tombstoned.size}; resurrections ${resurrected.size}`);
    expect(deleted.size).toBeGreaterThan(N / 2);
    expect(refusedLate).toBeGreaterThan(0);
    expect([...resurrected]).toEqual([]);

    // At the end: every deleted annotation is a tombstone, invisible to search.
    const final = await ctx.sink.fetchStates(annotations.index, [...deleted]);
    expect([...deleted].filter((id) => !final.get(id)?.deleted)).toEqual([]);
    const live = await ctx.raw.count(annotations.index, { bool: { filter: [{ term: { "tether.deleted": false } }, { ids: { values: [...deleted] } }] } });
    expect(live).toBe(0);
    const search = await call("GET", `${api.url}/api/search?user=${encodeURIComponent("acct:racer@example.com")}&limit=200`);
    expect(search.status).toBe(200);
    const found = JSON.stringify(search.body);
    for (const id of deleted) expect(found).not.toContain(`"id":"${id}"`);
    expect(await verifyCollection(ctx.db, ctx.sink, annotations)).toMatchObject({ driftedTotal: 0 });
    expect(auditSummary(await auditAnnotations(ctx.db, ctx.sink))).toEqual({ lost: 0, stale: 0, duplicates: 0, jobs: 0, parked: 0 });
  });
});
