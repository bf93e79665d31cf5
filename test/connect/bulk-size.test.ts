import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { elasticsearch } from "@tether/elasticsearch";
import type { SinkOperation } from "@tether/core";
import { createTestContext, startFaultProxy, type BulkExchange, type FaultProxy, type TestContext } from "@tether/testkit";

const CAP = 200_000;

describe("bulk requests are capped in bytes before they are sent", () => {
  let ctx: TestContext;
  let proxy: FaultProxy;
  beforeAll(async () => {
    ctx = await createTestContext();
    proxy = await startFaultProxy({ target: ctx.elasticsearchUrl });
  });
  afterAll(async () => {
    await proxy?.close();
    await ctx?.close();
  });

  it("splits a batch of documents near the cap so no body the engine receives exceeds it, and every document lands", async () => {
    const sink = elasticsearch({ maxBulkBytes: CAP })({ url: proxy.url, indexPrefix: ctx.indexPrefix });
    try {
      await sink.ensureIndex("big", { properties: { text: { type: "text", index: false } } });
      const seen: BulkExchange[] = [];
      const stop = proxy.observeBulk((e) => seen.push(e));
      // Sizes from a fifth of the cap to just under it, in an order that packs unevenly.
      const sizes = [40_000, 190_000, 60_000, 60_000, 60_000, 195_000, 10_000, 150_000, 45_000, 45_000, 45_000, 45_000];
      const ops: SinkOperation[] = sizes.map((n, i) => ({ kind: "index", id: String(i + 1), version: 1, document: { text: "x".repeat(n) } }));
      const results = await sink.write("big", ops);
      stop();
      expect(results.map((r) => r.status)).toEqual(ops.map(() => "ok"));
      expect(seen.length).toBeGreaterThan(4);
      for (const e of seen) expect(e.bytes).toBeLessThanOrEqual(CAP);
      // Nothing went twice and nothing waited on a 413.
      expect(seen.flatMap((e) => e.items.map((i) => i.id)).sort((a, b) => Number(a) - Number(b))).toEqual(ops.map((o) => o.id));
      expect(proxy.stats.bulkTooLarge).toBe(0);
      expect((await sink.fetchVersions!("big", ops.map((o) => o.id))).size).toBe(ops.length);
    } finally {
      await sink.close?.();
    }
  });

  it("sends a document larger than the cap alone, and packs the rest as before", async () => {
    const sink = elasticsearch({ maxBulkBytes: 50_000 })({ url: proxy.url, indexPrefix: ctx.indexPrefix });
    try {
      // This sink learns the index is a concrete one (written without require_alias) up front.
      await sink.ensureIndex("big");
      const seen: BulkExchange[] = [];
      const stop = proxy.observeBulk((e) => seen.push(e));
      const ops: SinkOperation[] = [10_000, 80_000, 10_000, 10_000].map((n, i) => ({ kind: "index", id: `o${i}`, version: 1, document: { text: "y".repeat(n) } }));
      const results = await sink.write("big", ops);
      stop();
      expect(results.every((r) => r.status === "ok")).toBe(true);
      expect(seen.map((e) => e.items.map((i) => i.id))).toEqual([["o0"], ["o1"], ["o2", "o3"]]);
    } finally {
      await sink.close?.();
    }
  });
});
