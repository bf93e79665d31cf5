import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startFaultProxy, waitFor, type FaultProxy, type TestContext } from "@tether/testkit";
import { createAnnotationContext } from "./support/annotation-context.js";
import { spawnService, stopAll, type ServiceProcess } from "./support/processes.js";

describe("the API starting while Elasticsearch hangs", () => {
  let ctx: TestContext;
  let proxy: FaultProxy;
  let api: ServiceProcess | undefined;
  beforeAll(async () => {
    ctx = await createAnnotationContext();
    proxy = await startFaultProxy({ target: ctx.downstreamUrl });
  });
  afterAll(async () => {
    await stopAll([api]);
    await proxy?.close();
    await ctx?.close();
  });

  it("listens and takes writes at once, ensures the index in the background, and reports the breaker in /healthz", async () => {
    await proxy.setMode("hang");
    // Start-up used to wait for the index with the client's 30 s timeout; the deadline here is well below it.
    api = await spawnService(
      "api",
      { DATABASE_URL: ctx.databaseUrl, ...ctx.serviceEnv(proxy.url), TETHER_INDEX_PREFIX: ctx.indexPrefix, TETHER_DIRECT_SYNC_TIMEOUT_MS: "200", TETHER_BREAKER_FAILURES: "2" },
      { startTimeoutMs: 20_000 },
    );
    // The index is asked for and hangs (the request may reach the proxy just after "listening"):
    // start-up did not wait for it.
    await waitFor(() => proxy.stats.hung > 0, { what: "the index request to reach the hanging engine", timeoutMs: 15_000 });
    expect(api.logs.some((l) => l.includes('"index ensured"'))).toBe(false);

    const post = (text: string) =>
      fetch(`${api!.url}/api/annotations`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ user: "acct:start@example.com", uri: "https://example.com/start", text }),
      });
    const statuses: number[] = [];
    for (let i = 0; i < 4; i++) statuses.push((await post(`w${i}`)).status);
    expect(statuses).toEqual([201, 201, 201, 201]);

    const health = await fetch(`${api.url}/healthz`);
    expect(health.status).toBe(200);
    const body = (await health.json()) as { postgres: string; elasticsearch: string; directSync: { breaker: string } };
    expect(body).toMatchObject({ postgres: "ok", elasticsearch: "down", directSync: { breaker: "open" } });
    expect(api.logs.filter((l) => l.includes("direct sync breaker open"))).toHaveLength(1);
    const metrics = await (await fetch(`${api.url}/metrics`)).text();
    expect(metrics).toMatch(/^tether_direct_sync_breaker_state(\{[^}]*\})? 2$/m);
    expect(metrics).toMatch(/^tether_direct_sync_total\{[^}]*outcome="breaker_open"[^}]*\} 2$/m);
  });
});
