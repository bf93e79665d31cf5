import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { sql } from "kysely";
import { defineCollection, Drainer, insertJobs, type DrainResult } from "@tether/core/internal";
import type { ElasticsearchSink } from "@tether/elasticsearch";
import { startFaultProxy, type FaultProxy, type TestContext } from "@tether/testkit";
import { annotations, createAnnotationContext, insertRawAnnotations } from "./support/annotation-context.js";
import { auditAnnotations, auditSummary } from "@tether/testkit";
import { drainToEmpty } from "./support/drain.js";

const BACKOFF = { baseMs: 400, maxMs: 2_000 };

describe("retry paths through the fault proxy, against the real Elasticsearch", () => {
  let ctx: TestContext;
  let proxy: FaultProxy;
  let viaProxy: ElasticsearchSink;

  beforeAll(async () => {
    ctx = await createAnnotationContext();
    proxy = await startFaultProxy({ target: ctx.elasticsearchUrl });
    viaProxy = ctx.sinkAt(proxy.url);
  });
  afterEach(async () => {
    await proxy.setMode("pass");
    proxy.resetStats();
    await sql`DELETE FROM tether.job`.execute(ctx.db);
    await sql`DELETE FROM tether.dead_job`.execute(ctx.db);
  });
  afterAll(async () => {
    await proxy.close();
    await ctx.close();
  });

  /** New rows with no document yet, and a due job for each. */
  const freshWork = async (n: number, text?: string) => {
    const ids = await insertRawAnnotations(ctx.db, n);
    if (text !== undefined) await sql`UPDATE annotation SET text = ${text} WHERE id = ANY(${ids}::bigint[])`.execute(ctx.db);
    await insertJobs(ctx.db, ids.map((id) => ({ name: annotations.jobName, entityId: id, priority: 1, tag: "live", delayMs: 0 })));
    return ids;
  };
  const drainer = (extra: Partial<ConstructorParameters<typeof Drainer>[0]> = {}) =>
    new Drainer({ db: ctx.db, sink: viaProxy, collections: [annotations], backoff: BACKOFF, sinkRetries: 0, ...extra });

  for (const status of [429, 503]) {
    it(`a per-item ${status} is retried with a jittered backoff, then confirmed`, async () => {
      const ids = await freshWork(40);
      await proxy.setMode({ kind: "rejectBulkItems", status, fraction: 0.5, times: 1 });
      const d = drainer();
      const first = await d.drainOnce();
      expect(first).toMatchObject({ claimed: 40, repaired: 20, retried: 20, parked: 0 });
      expect(proxy.stats.bulkItemsRejected).toBe(20);

      const waiting = await sql<{ attempts: number; last_error: string; delay_ms: number }>`
        SELECT attempts, last_error, extract(epoch FROM scheduled_at - now()) * 1000 AS delay_ms FROM tether.job`.execute(ctx.db);
      expect(waiting.rows).toHaveLength(20);
      for (const w of waiting.rows) {
        expect(w.attempts).toBe(1);
        expect(w.last_error).toContain(`HTTP ${status} ${status === 429 ? "es_rejected_execution_exception" : "unavailable_shards_exception"}`);
        // Second attempt: nominal 2 × base, jittered into [0.5, 1.5) of it (less the time since).
        expect(Number(w.delay_ms)).toBeLessThan(1.5 * 2 * BACKOFF.baseMs);
      }
      // Jitter: the rescheduled jobs do not all come due at the same instant.
      const spread = await sql<{ n: string }>`SELECT count(DISTINCT scheduled_at) AS n FROM tether.job`.execute(ctx.db);
      expect(Number(spread.rows[0]!.n)).toBeGreaterThan(10);

      const rest = await drainToEmpty(d, ctx.db);
      expect(rest.reduce((a, r) => a + r.repaired, 0)).toBe(20);
      const states = await ctx.sink.fetchStates(annotations.index, ids);
      expect(states.size).toBe(40);
      expect(auditSummary(await auditAnnotations(ctx.db, ctx.sink))).toEqual({ lost: 0, stale: 0, duplicates: 0, jobs: 0, parked: 0 });
    });
  }

  it("a request-level 503 is retried by the client's retry policy inside the pass", async () => {
    await freshWork(10);
    await proxy.setMode({ kind: "status", status: 503, times: 1 });
    const once = await drainer({ sinkRetries: 2 }).drainOnce();
    expect(once).toMatchObject({ claimed: 10, repaired: 10, retried: 0 });
    expect(proxy.stats.statuses[503]).toBe(1);

    // More 503s in a row than the policy's retries: 1 + 2 attempts, then the jobs back off.
    await freshWork(10);
    await proxy.setMode({ kind: "status", status: 503, times: 5 });
    const exhausted = await drainer({ sinkRetries: 2 }).drainOnce();
    expect(exhausted).toMatchObject({ claimed: 10, repaired: 0, retried: 10 });
    expect(proxy.stats.statuses[503]).toBe(4);
    const errors = await sql<{ last_error: string }>`SELECT DISTINCT last_error FROM tether.job`.execute(ctx.db);
    expect(errors.rows).toEqual([{ last_error: expect.stringContaining("mget failed: HTTP 503") }]);
  });

  it("a bulk over the size limit is split until each part fits, and a document too large alone parks", async () => {
    await freshWork(30, "x".repeat(200));
    const [huge] = await freshWork(1, "y".repeat(6_000));
    await proxy.setMode({ kind: "bulkSizeLimit", maxBytes: 4_000 });
    const sizes: number[] = [];
    const stop = proxy.observeBulk((e) => sizes.push(e.items.length));
    const r = await drainer({ maxAttempts: 1 }).drainOnce();
    stop();
    expect(r).toMatchObject({ claimed: 31, repaired: 30, parked: 1, retried: 0 });
    expect(proxy.stats.bulkTooLarge).toBeGreaterThanOrEqual(3);
    expect(sizes.reduce((a, n) => a + n, 0)).toBe(30);
    expect(Math.max(...sizes)).toBeLessThan(31);
    const dead = await sql<{ kwargs: { id: string }; last_error: string }>`SELECT kwargs, last_error FROM tether.dead_job`.execute(ctx.db);
    expect(dead.rows).toEqual([{ kwargs: { id: huge }, last_error: expect.stringContaining("HTTP 413") }]);
  });

  it("a mapping error parks its job after the allowed attempts, and the rest of the batch is confirmed", async () => {
    // The same rows, declared into an index whose mapping refuses the text field.
    const badMap = defineCollection({
      name: "annotation_badmap",
      table: annotations.table,
      ...(annotations.deletedColumn ? { deletedColumn: annotations.deletedColumn } : {}),
      index: "annotations_badmap",
      toDocument: (row: Record<string, unknown>) => annotations.toDocument(row as never),
      mappings: { properties: { text: { type: "long" } } },
    });
    await viaProxy.ensureIndex(badMap.index, badMap.mappings);
    const good = await freshWork(5);
    await insertJobs(ctx.db, [{ name: badMap.jobName, entityId: good[0]!, priority: 1, tag: "live", delayMs: 0 }]);
    const d = new Drainer({ db: ctx.db, sink: viaProxy, collections: [annotations, badMap], backoff: { baseMs: 50, maxMs: 100 }, maxAttempts: 2, sinkRetries: 0 });
    const first = await d.drainOnce();
    expect(first).toMatchObject({ claimed: 6, repaired: 5, retried: 1, parked: 0 });
    const rest = await drainToEmpty(d, ctx.db);
    expect(rest.reduce((a, r) => a + r.parked, 0)).toBe(1);
    const dead = await sql<{ name: string; reason: string; attempts: number; last_error: string }>`
      SELECT name, reason, attempts, last_error FROM tether.dead_job`.execute(ctx.db);
    expect(dead.rows).toEqual([{ name: badMap.jobName, reason: "parked", attempts: 2, last_error: expect.stringMatching(/HTTP 400 (mapper_parsing_exception|document_parsing_exception)/) }]);
  });

  it("a write block on the index (403 cluster_block_exception) is waited out, never parked", async () => {
    const index = ctx.sink.indexName(annotations.index);
    // This test's own index only: an index-level block, nothing cluster-wide.
    const block = (on: boolean) => ctx.sink.client.indices.putSettings({ index, settings: { "index.blocks.write": on ? true : null } });
    const ids = await freshWork(5);
    await block(true);
    let blocked;
    try {
      blocked = await drainer({ maxAttempts: 1 }).drainOnce();
    } finally {
      await block(false);
    }
    expect(blocked).toMatchObject({ claimed: 5, retried: 5, parked: 0 });
    const errors = await sql<{ last_error: string }>`SELECT DISTINCT last_error FROM tether.job`.execute(ctx.db);
    expect(errors.rows).toEqual([{ last_error: expect.stringContaining("HTTP 403 cluster_block_exception") }]);
    await drainToEmpty(drainer({ maxAttempts: 1 }), ctx.db);
    // Earlier tests leave rows they meant to leave unsynced: look at this test's rows only.
    const states = await ctx.sink.fetchStates(annotations.index, ids);
    expect([...states.values()].filter((st) => !st.deleted && st.version === 1)).toHaveLength(5);
    expect(await sql<{ n: string }>`SELECT count(*) AS n FROM tether.dead_job`.execute(ctx.db).then((r) => Number(r.rows[0]!.n))).toBe(0);
  });

  it("the loop drains back to back while batches come back full, then waits for its interval", async () => {
    await freshWork(35);
    const d = drainer({ batchSize: 10, intervalMs: 600_000 });
    const batches: DrainResult[] = [];
    const short = new Promise<void>((resolve) =>
      d.on("batch", (r) => {
        batches.push(r);
        if (r.claimed < 10) resolve();
      }),
    );
    d.start();
    try {
      // With a 10-minute interval, only the back-to-back rule can bring the short batch.
      await short;
    } finally {
      await d.stop();
    }
    expect(batches.map((b) => b.claimed)).toEqual([10, 10, 10, 5]);
    expect(batches.every((b) => b.repaired === b.claimed && !b.error)).toBe(true);
  });
});
