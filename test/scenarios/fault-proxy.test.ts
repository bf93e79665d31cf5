import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import pg from "pg";
import { RetryableSinkError, type SinkOperation } from "@tether/core";
import type { ElasticsearchSink } from "@tether/elasticsearch";
import { createTestContext, startFaultProxy, startTcpProxy, type BulkExchange, type FaultProxy, type TestContext } from "@tether/testkit";
import { waitFor } from "@tether/testkit";

const INDEX = "proxied";
const doc = (id: string, version: number): SinkOperation => ({ kind: "index", id, version, document: { text: `v${version}` } });

describe("the fault proxy in front of the real Elasticsearch", () => {
  let ctx: TestContext;
  let proxy: FaultProxy;
  let viaProxy: ElasticsearchSink;

  beforeAll(async () => {
    ctx = await createTestContext();
    await ctx.sink.ensureIndex(INDEX, { properties: { text: { type: "text" } } });
    proxy = await startFaultProxy({ target: ctx.elasticsearchUrl });
    viaProxy = ctx.sinkAt(proxy.url);
  });
  afterEach(async () => {
    await proxy.setMode("pass");
    proxy.resetStats();
  });
  afterAll(async () => {
    await proxy.close();
    await ctx.close();
  });

  const stored = async (id: string) => (await ctx.sink.fetchStates(INDEX, [id])).get(id);

  it("passes requests through untouched in pass mode", async () => {
    const res = await viaProxy.write(INDEX, [doc("1", 3)], { retries: 0 });
    expect(res).toEqual([{ id: "1", status: "ok" }]);
    expect(await stored("1")).toMatchObject({ version: 3, deleted: false });
    expect(proxy.stats.requests).toBeGreaterThan(0);
  });

  it("adds latency and still forwards a write whose client already timed out, so it lands late", async () => {
    await proxy.setMode({ kind: "latency", ms: 400 });
    await expect(viaProxy.write(INDEX, [doc("2", 1)], { retries: 0, timeoutMs: 100 })).rejects.toBeInstanceOf(RetryableSinkError);
    expect(await stored("2")).toBeUndefined();
    await waitFor(async () => (await stored("2"))?.version === 1, { what: "the late write to land" });
    expect(proxy.stats.delayed).toBe(1);
  });

  it("delays only bulks with bulkOnly, counting a delayed bulk when it arrives, before it lands", async () => {
    await proxy.setMode({ kind: "latency", ms: 1_500, bulkOnly: true });
    expect((await viaProxy.fetchStates(INDEX, ["1"], { retries: 0 })).get("1")?.version).toBe(3);
    expect(proxy.stats.delayed).toBe(0);
    expect(proxy.stats.passed).toBe(1);
    const late = viaProxy.write(INDEX, [doc("2b", 1)], { retries: 0, timeoutMs: 120_000 });
    await waitFor(() => proxy.stats.bulkRequests === 1, { what: "the bulk to reach the proxy" });
    // Counted while it is still held: a test can act between "the bulk left" and "it landed".
    expect(proxy.stats.pendingDelayed).toBe(1);
    expect(await late).toEqual([{ id: "2b", status: "ok" }]);
    expect(proxy.stats).toMatchObject({ delayed: 1, pendingDelayed: 0, bulkRequests: 1 });
    expect(await stored("2b")).toMatchObject({ version: 1, deleted: false });
  });

  it("refuses connections while in refuse mode and accepts them again afterwards", async () => {
    await proxy.setMode("refuse");
    const err = await fetch(proxy.url).catch((e: unknown) => e as Error & { cause?: { code?: string } });
    expect((err as { cause?: { code?: string } }).cause?.code).toBe("ECONNREFUSED");
    await expect(viaProxy.fetchStates(INDEX, ["1"], { retries: 0 })).rejects.toBeInstanceOf(RetryableSinkError);
    await proxy.setMode("pass");
    expect((await viaProxy.fetchStates(INDEX, ["1"], { retries: 0 })).get("1")?.version).toBe(3);
  });

  it("resets connections at once in reset mode", async () => {
    await proxy.setMode("reset");
    await expect(viaProxy.fetchStates(INDEX, ["1"], { retries: 0 })).rejects.toBeInstanceOf(RetryableSinkError);
    expect(proxy.stats.reset).toBe(1);
  });

  it("accepts and never answers in hang mode, so only the client's timeout ends the request", async () => {
    await proxy.setMode("hang");
    const started = Date.now();
    await expect(viaProxy.write(INDEX, [doc("3", 1)], { retries: 0, timeoutMs: 300 })).rejects.toBeInstanceOf(RetryableSinkError);
    expect(Date.now() - started).toBeGreaterThanOrEqual(250);
    expect(proxy.stats.hung).toBe(1);
    expect(await stored("3")).toBeUndefined();
  });

  it.each([429, 503])("answers %i with an Elasticsearch-shaped error and forwards nothing", async (status) => {
    await proxy.setMode(String(status) as "429" | "503");
    const res = await fetch(new URL(`/${ctx.indexPrefix}${INDEX}/_doc/4`, proxy.url), { method: "PUT", headers: { "content-type": "application/json" }, body: "{}" });
    expect(res.status).toBe(status);
    expect(res.headers.get("x-elastic-product")).toBe("Elasticsearch");
    await expect(viaProxy.write(INDEX, [doc("4", 1)], { retries: 0 })).rejects.toBeInstanceOf(RetryableSinkError);
    expect(proxy.stats.statuses[status]).toBe(2);
    expect(await stored("4")).toBeUndefined();
  });

  it("cuts the connection mid-response after Elasticsearch did the work", async () => {
    await proxy.setMode("cut");
    await expect(viaProxy.write(INDEX, [doc("5", 2)], { retries: 0 })).rejects.toBeInstanceOf(RetryableSinkError);
    expect(proxy.stats.cut).toBe(1);
    expect(await stored("5")).toMatchObject({ version: 2, deleted: false });
  });

  it("drops a fraction of bulk items and omits them from a 200 OK response", async () => {
    await proxy.dropBulkItems(0.5);
    const ops = Array.from({ length: 10 }, (_, i) => doc(String(100 + i), 1));
    const res = await viaProxy.write(INDEX, ops, { retries: 0 });
    const present = await ctx.sink.fetchStates(INDEX, ops.map((o) => o.id));
    expect(present.size).toBe(5);
    expect(proxy.stats.bulkItemsDropped).toBe(5);
    // The sink matches results by id: every dropped item is reported as missing from the answer.
    const missing = res.filter((r) => r.status === "retryable").map((r) => r.id);
    expect(missing.sort()).toEqual(ops.map((o) => o.id).filter((id) => !present.has(id)).sort());
  });

  it("with forge, reports dropped bulk items as created although Elasticsearch never saw them", async () => {
    await proxy.dropBulkItems(0.3, { forge: true });
    const ops = Array.from({ length: 10 }, (_, i) => doc(String(200 + i), 1));
    const res = await viaProxy.write(INDEX, ops, { retries: 0 });
    expect(res.every((r) => r.status === "ok")).toBe(true);
    expect((await ctx.sink.fetchStates(INDEX, ops.map((o) => o.id))).size).toBe(7);
  });

  it("lets observers see every forwarded bulk item with its version and Elasticsearch's status", async () => {
    const seen: BulkExchange[] = [];
    const stop = proxy.observeBulk((e) => seen.push(e));
    try {
      await viaProxy.write(INDEX, [doc("300", 5)], { retries: 0 });
      await viaProxy.write(INDEX, [doc("300", 4), doc("301", 1)], { retries: 0 });
    } finally {
      stop();
    }
    const items = seen.flatMap((e) => e.items);
    expect(items.map((i) => [i.id, i.version, i.versionType, i.status])).toEqual([
      ["300", 5, "external", 201],
      ["300", 4, "external", 409],
      ["301", 1, "external", 201],
    ]);
    expect(seen[1]!.sentAt).toBeGreaterThanOrEqual(seen[0]!.receivedAt);
  });
});

describe("the TCP proxy in front of the real Postgres", () => {
  let ctx: TestContext;
  beforeAll(async () => {
    ctx = await createTestContext();
  });
  afterAll(() => ctx.close());

  it("pipes Postgres connections, cuts them all at once, refuses new ones and accepts again", async () => {
    const u = new URL(ctx.databaseUrl);
    const tcp = await startTcpProxy({ host: u.hostname, port: Number(u.port || 5432) });
    const client = new pg.Client({ connectionString: tcp.rewriteUrl(ctx.databaseUrl) });
    const errors: Error[] = [];
    client.on("error", (e) => errors.push(e));
    try {
      await client.connect();
      expect((await client.query("SELECT 1 AS one")).rows[0].one).toBe(1);
      expect(tcp.stats.open).toBe(1);

      const slow = client.query("SELECT pg_sleep(5)");
      expect(tcp.cutAll()).toBe(1);
      await expect(slow).rejects.toThrow();

      await tcp.refuse(true);
      const refused = new pg.Client({ connectionString: tcp.rewriteUrl(ctx.databaseUrl) });
      await expect(refused.connect()).rejects.toMatchObject({ code: "ECONNREFUSED" });

      await tcp.refuse(false);
      const again = new pg.Client({ connectionString: tcp.rewriteUrl(ctx.databaseUrl) });
      await again.connect();
      expect((await again.query("SELECT 2 AS two")).rows[0].two).toBe(2);
      await again.end();
    } finally {
      await client.end().catch(() => undefined);
      await tcp.close();
    }
  });
});
