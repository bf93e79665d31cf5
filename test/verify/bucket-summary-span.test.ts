import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { EngineSink } from "@tether/search-sink";
import { createTestContext, type TestContext } from "@tether/testkit";
import { summarizeBuckets } from "../../packages/search-sink/src/bucket-reads.js";

const INDEX = "spans";
const DOCS = 300;

// Runs once per sink (the vitest projects).
describe("a bucket summary reads only the documents of its buckets", () => {
  let ctx: TestContext<EngineSink>;
  /** What each search matched: `track_total_hits` on, so the engine says how many documents the query visited. */
  const matched: number[] = [];
  const search = async (body: Record<string, unknown>) => {
    const res = await fetch(new URL(`/${ctx.sink.indexName(INDEX)}/_search`, ctx.downstreamUrl), {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ ...body, track_total_hits: true }),
    });
    const json = (await res.json()) as { hits: { total: { value: number }; hits: [] }; aggregations?: Record<string, unknown> };
    matched.push(json.hits.total.value);
    return json;
  };

  // OpenSearch cannot aggregate `_version`: its sink sums versions from a scan of the same span.
  const aggregatesVersions = () => (ctx.sink as unknown as { aggregatesVersions: boolean }).aggregatesVersions;

  beforeAll(async () => {
    ctx = await createTestContext({ sink: "per-project" });
    await ctx.sink.ensureIndex(INDEX, { properties: { n: { type: "integer" } } });
    const ops = Array.from({ length: DOCS }, (_, i) => ({ kind: "index" as const, id: String(i + 1), version: 1, document: { n: i + 1 } }));
    const written = await ctx.sink.write(INDEX, ops);
    expect(written.filter((r) => r.status !== "ok")).toEqual([]);
    await ctx.sink.refreshIndex(INDEX);
  });
  afterAll(() => ctx.close());

  it("counts each bucket and limits the query to their span, not the whole index", async () => {
    // A window of two buckets, ids 101..120, in a 300-document index.
    const summaries = await summarizeBuckets(search, [{ from: 101n, to: 111n }, { from: 111n, to: 121n }], aggregatesVersions());
    expect(summaries.map((s) => s.count)).toEqual([10, 10]);
    expect(summaries.map((s) => s.versionSum)).toEqual([10, 10]);
    // The aggregation (and on OpenSearch the version scan) matched the window's 20 documents only.
    expect(matched).toEqual(aggregatesVersions() ? [20] : [20, 20]);
  });

  it("spans buckets given out of order", async () => {
    matched.length = 0;
    const summaries = await summarizeBuckets(search, [{ from: 291n, to: 401n }, { from: 1n, to: 6n }], aggregatesVersions());
    expect(summaries.map((s) => s.count)).toEqual([10, 5]);
    expect(summaries.map((s) => s.versionSum)).toEqual([10, 5]);
    expect(matched[0]).toBe(DOCS);
  });
});
