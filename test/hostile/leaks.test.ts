import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTestContext, startTcpProxy, waitFor, type TcpProxy, type TestContext } from "@tether/testkit";
import { spawnService, stopAll, type ServiceProcess } from "../scenarios/support/processes.js";
import { closedPort } from "./support/closed-port.js";

const ADMIN_TOKEN = "admin-token-for-leaks";


/** Nothing that locates or names an internal dependency. */
function expectNoInternals(body: string, ports: number[]): void {
  expect(body).not.toMatch(/127\.0\.0\.1|localhost|ECONNREFUSED|ConnectionError|connect /i);
  for (const p of ports) expect(body).not.toContain(String(p));
}

describe("no secret or internal address leaves a running service", () => {
  let ctx: TestContext;
  let api: ServiceProcess | undefined;
  let drainer: ServiceProcess | undefined;
  let proxy: TcpProxy | undefined;
  let esPort: number;
  beforeAll(async () => {
    ctx = await createTestContext();
    esPort = await closedPort();
  });
  afterAll(async () => {
    await stopAll([api, drainer]);
    await proxy?.close();
    await ctx.close();
  });

  it("the API, with Elasticsearch unreachable, answers unauthenticated /healthz and /api/search as ok/down with no address", async () => {
    api = await spawnService("api", {
      DATABASE_URL: ctx.databaseUrl,
      ELASTICSEARCH_URL: `http://127.0.0.1:${esPort}`,
      TETHER_INDEX_PREFIX: ctx.indexPrefix,
      TETHER_ADMIN_TOKEN: ADMIN_TOKEN,
    });
    const health = await fetch(`${api.url}/healthz`);
    const healthBody = await health.text();
    expect(health.status).toBe(200);
    expect(JSON.parse(healthBody)).toEqual({ status: "ok", postgres: "ok", elasticsearch: "down", directSync: { breaker: "closed", consecutiveFailures: 0 } });
    expectNoInternals(healthBody, [esPort]);

    const search = await fetch(`${api.url}/api/search?q=anything`);
    const searchBody = await search.text();
    expect(search.status).toBe(503);
    expect(JSON.parse(searchBody)).toEqual({ error: "search_unavailable", message: "search is unavailable; retry later" });
    expectNoInternals(searchBody, [esPort]);
  });

  it("the API never logs a token sent as a query parameter", async () => {
    const secrets = ["tok-in-query-1", "tok-in-query-2", "tok-in-query-3"];
    const queue = await fetch(`${api!.url}/admin/queue?token=${secrets[0]}`, { headers: { authorization: `Bearer ${ADMIN_TOKEN}` } });
    expect(queue.status).toBe(200);
    await fetch(`${api!.url}/admin/alerts?access_token=${secrets[1]}&verbose=1`);
    await fetch(`${api!.url}/healthz?apiKey=${secrets[2]}`);
    const exit = await api!.stop();
    expect(exit.code).toBe(0);
    const logs = api!.logs.join("\n");
    for (const s of [...secrets, ADMIN_TOKEN]) expect(logs).not.toContain(s);
    expect(logs).toContain("token=[redacted]");
    expect(logs).toContain("access_token=[redacted]&verbose=1");
    api = undefined;
  });

  it("the drainer, with Postgres cut mid-run, reports the failure on /healthz and /alerts without driver text or addresses", async () => {
    const u = new URL(ctx.databaseUrl);
    proxy = await startTcpProxy({ host: u.hostname, port: Number(u.port || 5432) });
    drainer = await spawnService("drainer", {
      DATABASE_URL: proxy.rewriteUrl(ctx.databaseUrl),
      ELASTICSEARCH_URL: `http://127.0.0.1:${esPort}`,
      TETHER_INDEX_PREFIX: ctx.indexPrefix,
      TETHER_DRAIN_INTERVAL_MS: "100",
    });
    await proxy.refuse(true);
    proxy.cutAll();
    await waitFor(
      async () => ((await (await fetch(`${drainer!.url}/healthz`)).json()) as { lastPass?: { error?: string } }).lastPass?.error !== undefined,
      { what: "a failed drain pass on /healthz" },
    );
    const health = await fetch(`${drainer.url}/healthz`);
    const healthBody = await health.text();
    expect((JSON.parse(healthBody) as { lastPass: { error: string } }).lastPass.error).toBe("unreachable");
    expectNoInternals(healthBody, [proxy.port, esPort]);
    // The operator still finds the driver's text in the log.
    expect(drainer.logs.join("\n")).toMatch(/drain pass failed/);

    const alerts = await fetch(`${drainer.url}/alerts`);
    const alertsBody = await alerts.text();
    expect(alerts.status).toBe(503);
    expect(JSON.parse(alertsBody)).toMatchObject({ error: "database_unavailable" });
    expect(Object.keys(JSON.parse(alertsBody) as object).sort()).toEqual(["error", "message"]);
    expectNoInternals(alertsBody, [proxy.port, esPort]);
    await proxy.refuse(false);
  });
});
