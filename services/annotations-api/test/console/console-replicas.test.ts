import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Browser, BrowserContext, Page, Response } from "playwright-core";
import { sql } from "kysely";
import { migrate } from "@tether/core";
import { annotationMigrations } from "@tether/annotations";
import { createTestContext, startRoundRobinProxy, UPSTREAM_HEADER, type RoundRobinProxy, type TestContext } from "@tether/testkit";
import { spawnService, stopAll, type ServiceProcess } from "../../../../test/scenarios/support/processes.js";
import { BROWSER_HOOK_TIMEOUT_MS, BROWSER_TEST_TIMEOUT_MS, buildConsolePage, launchChromium, POLL } from "./browser.js";

const TOKEN = "replica-walk-operator-token";

describe("the console behind two API processes and a round-robin balancer, in Chromium", () => {
  let ctx: TestContext;
  const apis: ServiceProcess[] = [];
  let lb: RoundRobinProxy;
  let browser: Browser;
  let context: BrowserContext;
  let page: Page;

  beforeAll(async () => {
    buildConsolePage();
    ctx = await createTestContext();
    await migrate(ctx.db, [annotationMigrations]);
    const env = { DATABASE_URL: ctx.databaseUrl, ELASTICSEARCH_URL: ctx.elasticsearchUrl, TETHER_INDEX_PREFIX: ctx.indexPrefix, TETHER_SINK: "elasticsearch", TETHER_ADMIN_TOKEN: TOKEN };
    // Each start awaits its "listening" line; the limit only guards against a hang.
    const start = () => spawnService("api", env, { startTimeoutMs: BROWSER_HOOK_TIMEOUT_MS - 60_000 });
    apis.push(...(await Promise.all([start(), start()])));
    lb = await startRoundRobinProxy(apis.map((a) => a.url));
    browser = await launchChromium();
    context = await browser.newContext({ viewport: { width: 1366, height: 768 } });
    context.setDefaultTimeout(POLL.timeout);
    page = await context.newPage();
  }, BROWSER_HOOK_TIMEOUT_MS);
  afterAll(async () => {
    await browser?.close();
    await lb?.close();
    await stopAll(apis);
    await ctx?.close();
  }, BROWSER_HOOK_TIMEOUT_MS);

  /** The answer to the next `method path` request, and which replica gave it. */
  const answerTo = (method: string, path: string) =>
    page.waitForResponse((r: Response) => r.request().method() === method && new URL(r.url()).pathname === path);
  const replicaOf = (r: Response) => Number(r.headers()[UPSTREAM_HEADER]);
  const steerTo = (routes: Record<string, number>) => lb.steer((method, url) => routes[`${method} ${url.split("?")[0]}`]);

  it("logs in through one replica, acts through the other, logs out through the first, and the old cookie is refused by both", async () => {
    // Everything not steered rotates over both replicas (the page, its assets, its reads).
    steerTo({ "POST /admin/session": 0, "GET /admin/session": 1, "POST /admin/lanes/sync_annotation/pause": 1, "DELETE /admin/session": 0 });

    await page.goto(`${lb.url}/admin/`);
    await page.getByTestId("login-token").fill(TOKEN);
    const login = answerTo("POST", "/admin/session");
    await page.getByTestId("login-submit").click();
    expect((await login).status()).toBe(200);
    expect(replicaOf(await login)).toBe(0);
    await page.getByTestId("view-overview").waitFor();

    // A fresh load: the page asks replica 1 who it is, with the cookie replica 0 issued.
    const whoAmI = answerTo("GET", "/admin/session");
    await page.goto("about:blank");
    await page.goto(`${lb.url}/admin/#/lanes`);
    expect([(await whoAmI).status(), replicaOf(await whoAmI)]).toEqual([200, 1]);
    await page.getByTestId("pause-sync_annotation").click();
    await page.getByTestId("confirm-input").fill("acted through replica 1");
    const pause = answerTo("POST", "/admin/lanes/sync_annotation/pause");
    await page.getByTestId("confirm-ok").click();
    expect([(await pause).status(), replicaOf(await pause)]).toEqual([200, 1]);
    await page.getByTestId("resume-sync_annotation").waitFor();
    expect((await sql<{ reason: string }>`SELECT reason FROM tether.paused_name`.execute(ctx.db)).rows).toEqual([{ reason: "acted through replica 1" }]);
    for (const upstream of [0, 1]) expect(lb.served.filter((x) => x.upstream === upstream && x.status === 200).length, `replica ${upstream}`).toBeGreaterThan(2);

    const [oldCookie] = await context.cookies(`${lb.url}/admin/`);
    expect(oldCookie).toMatchObject({ name: "tether_admin_session", httpOnly: true });
    const logout = answerTo("DELETE", "/admin/session");
    await page.getByRole("button", { name: "Log out" }).click();
    expect([(await logout).status(), replicaOf(await logout)]).toEqual([204, 0]);
    await page.getByTestId("login-token").waitFor();

    // The browser presents the old cookie again, to each replica in turn: both refuse it.
    await context.addCookies([oldCookie!]);
    for (const upstream of [0, 1]) {
      steerTo({ "GET /admin/session": upstream });
      const check = answerTo("GET", "/admin/session");
      await page.goto("about:blank");
      await page.goto(`${lb.url}/admin/#/lanes`);
      expect([(await check).status(), replicaOf(await check)]).toEqual([401, upstream]);
      await page.getByTestId("login-token").waitFor();
    }
    for (const api of apis) {
      const direct = await fetch(`${api.url}/admin/lanes`, { headers: { cookie: `${oldCookie!.name}=${oldCookie!.value}` } });
      expect(direct.status).toBe(401);
    }

    const audit = await sql<{ actor: string; action: string; status: number }>`SELECT actor, action, status FROM tether.audit_log ORDER BY id`.execute(ctx.db);
    expect(audit.rows.filter((a) => a.action !== "read")).toEqual([
      { actor: "admin", action: "session.login", status: 200 },
      { actor: "admin", action: "lane.pause", status: 200 },
      { actor: "admin", action: "session.logout", status: 204 },
    ]);
    // Each refusal of the logged-out cookie is audited with whose session it was.
    expect(audit.rows.filter((a) => a.action === "read").length).toBeGreaterThanOrEqual(4);
    for (const a of audit.rows.filter((x) => x.action === "read")) expect(a).toEqual({ actor: "admin", action: "read", status: 401 });
  }, BROWSER_TEST_TIMEOUT_MS);
});
