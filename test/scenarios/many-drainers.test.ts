import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startFaultProxy, type BulkExchange, type BulkItemRecord, type FaultProxy, type TestContext } from "@tether/testkit";
import { countRows, createAnnotationContext } from "./support/annotation-context.js";
import { auditAnnotations, auditSummary } from "@tether/testkit";
import { call, scaled, startLiveLoad } from "@tether/testkit";
import { spawnService, stopAll, type ServiceProcess } from "./support/processes.js";
import { waitFor, waitForProgress } from "@tether/testkit";

interface Accepted {
  version: number;
  sentAt: number;
  receivedAt: number;
}

/**
 * Versions that Elasticsearch accepted although an accepted write of a newer version had
 * already come back before they were even sent: what external versioning must make impossible.
 */
function regressions(exchanges: readonly BulkExchange[]): { id: string; older: number; newer: number }[] {
  const byId = new Map<string, Accepted[]>();
  for (const e of exchanges) {
    for (const item of e.items) {
      if (item.status < 200 || item.status >= 300 || item.version === undefined) continue;
      const list = byId.get(item.id) ?? [];
      list.push({ version: item.version, sentAt: e.sentAt, receivedAt: e.receivedAt });
      byId.set(item.id, list);
    }
  }
  const out: { id: string; older: number; newer: number }[] = [];
  for (const [id, list] of byId) {
    for (const y of list) {
      for (const x of list) if (x.receivedAt < y.sentAt && y.version < x.version) out.push({ id, older: y.version, newer: x.version });
    }
  }
  return out;
}

/**
 * Four drainers, live writes (creates, edits, deletes) and a forced admin re-index of
 * everything, all at once, with the proxy reordering requests by random delays.
 */
// No wall-clock limit on the work: waits fail only when nothing progresses (waitForProgress);
// this bound is a guard against a hang, far above what a loaded 2-core machine needs.
const HANG_GUARD = { timeout: 1_800_000 };

describe("four drainers, live writes and an admin re-index at once", HANG_GUARD, () => {
  const WRITES = scaled(500, 50);
  let ctx: TestContext;
  let proxy: FaultProxy;
  let api: ServiceProcess | undefined;
  const drainers: ServiceProcess[] = [];

  beforeAll(async () => {
    ctx = await createAnnotationContext();
    proxy = await startFaultProxy({ target: ctx.elasticsearchUrl });
  });
  afterAll(async () => {
    await stopAll([api, ...drainers]);
    await proxy.close();
    await ctx.close();
  });

  it("converges, and Elasticsearch never accepts a version older than one it already acknowledged", async () => {
    const exchanges: BulkExchange[] = [];
    proxy.observeBulk((e) => exchanges.push(e));
    const common = { DATABASE_URL: ctx.databaseUrl, ELASTICSEARCH_URL: proxy.url, TETHER_INDEX_PREFIX: ctx.indexPrefix };
    const started = await Promise.all([
      spawnService("api", { ...common, TETHER_GRACE_MS: "300", TETHER_ADMIN_TOKEN: "scenario-admin" }),
      ...Array.from({ length: 4 }, () => spawnService("drainer", { ...common, TETHER_DRAIN_INTERVAL_MS: "200", TETHER_BATCH_SIZE: "100" })),
    ]);
    api = started[0]!;
    drainers.push(...started.slice(1));
    await proxy.setMode({ kind: "latency", ms: 0, jitterMs: 250 });

    const load = startLiveLoad(api.url, { concurrency: 4, editEvery: 3, deleteEvery: 11, max: WRITES });
    await waitForProgress(() => load.calls.length, (n) => n >= WRITES / 2, { what: "half of the writes" });
    const reindex = await call("POST", `${api.url}/admin/reindex`, { scope: "all", force: true }, { authorization: "Bearer scenario-admin" });
    expect(reindex.status).toBe(200);
    await load.done;
    expect(load.calls.filter((c) => c.status === 0 || c.status >= 500)).toEqual([]);

    await waitForProgress(() => countRows(ctx.db, "SELECT count(*) AS n FROM tether.job"), (n) => n === 0, { what: "the queue to drain" });
    await waitFor(() => proxy.stats.pendingDelayed === 0, { what: "late writes still in the proxy to land" });
    for (const d of drainers) expect(d.child.exitCode).toBeNull();

    const items: BulkItemRecord[] = exchanges.flatMap((e) => e.items);
    const conflicts = items.filter((i) => i.status === 409).length;
    console.log(
      `[4 drainers] ${load.calls.length} live calls, re-index enqueued ${String(reindex.body?.enqueued)}; bulk items seen ${items.length}, accepted ${items.filter((i) => i.status < 300).length}, refused as older (409) ${conflicts}`,
    );
    expect(regressions(exchanges)).toEqual([]);
    expect(items.filter((i) => i.versionType === "external_gte").length).toBeGreaterThan(0);
    expect(auditSummary(await auditAnnotations(ctx.db, ctx.sink))).toEqual({ lost: 0, stale: 0, duplicates: 0, jobs: 0, parked: 0 });
    const exits = await Promise.all(drainers.map((d) => d.stop()));
    expect(exits.map((e) => e.code)).toEqual([0, 0, 0, 0]);
  });
});
