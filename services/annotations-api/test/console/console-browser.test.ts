/// <reference lib="dom" />
import { createServer, type Server } from "node:http";
import { once } from "node:events";
import type { AddressInfo } from "node:net";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Browser, BrowserContext, Page } from "playwright-core";
import { sql } from "kysely";
import { annotations } from "@tether/annotations";
import { createWriter } from "@tether/core";
import { Drainer, DrainerHeartbeat, runMaintenance } from "@tether/core/internal";
import { ADMIN_TOKEN, createApiContext, type ApiContext } from "../support/api-context.js";
import { BROWSER_HOOK_TIMEOUT_MS, BROWSER_TEST_TIMEOUT_MS, buildConsolePage, launchChromium, POLL, SCREENSHOTS } from "./browser.js";

const VIEWER_TOKEN = "viewer-token-for-the-browser";
const XSS = "<img src=x onerror=alert(1)>";

describe("the admin console in a real Chromium", { timeout: BROWSER_TEST_TIMEOUT_MS }, () => {
  let ctx: ApiContext;
  let browser: Browser;
  let base: string;
  let operator: BrowserContext;
  let page: Page;
  const dialogs: string[] = [];
  const pageErrors: string[] = [];

  beforeAll(async () => {
    buildConsolePage();
    ctx = await createApiContext({ graceMs: 0, adminTokens: [{ name: "viewer", role: "viewer", token: VIEWER_TOKEN }] });
    await ctx.app.listen({ port: 0, host: "127.0.0.1" });
    base = `http://127.0.0.1:${(ctx.app.server.address() as AddressInfo).port}`;
    browser = await launchChromium();
    operator = await browser.newContext({ viewport: { width: 1366, height: 768 } });
    operator.setDefaultTimeout(POLL.timeout);
    page = await operator.newPage();
    page.on("dialog", (d) => {
      dialogs.push(d.message());
      void d.dismiss();
    });
    page.on("pageerror", (e) => pageErrors.push(e.message));
  }, BROWSER_HOOK_TIMEOUT_MS);
  afterAll(async () => {
    await browser?.close();
    await ctx?.close();
  }, BROWSER_HOOK_TIMEOUT_MS);

  const shot = (name: string, p: Page = page) => p.screenshot({ path: join(SCREENSHOTS, `${name}.png`), fullPage: true });
  const go = async (hash: string, p: Page = page) => {
    // A fresh load each time: a goto that only changes the hash would find the previous view.
    await p.goto("about:blank");
    await p.goto(`${base}/admin/#/${hash}`);
    await p.locator(`[data-testid="view-${hash.split("?")[0]}"]`).waitFor();
  };
  const annotate = async (body: object) => {
    const r = await fetch(`${base}/api/annotations`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(body) });
    expect(r.status).toBe(201);
    return ((await r.json()) as { id: string }).id;
  };
  const laneCell = (p: Page, column: number) => p.locator('[data-testid="overview-lanes"] tr', { hasText: "sync_annotation" }).locator("td").nth(column);
  const login = async (p: Page, token: string) => {
    await p.goto(`${base}/admin/`);
    await p.getByTestId("login-token").fill(token);
    await p.getByTestId("login-submit").click();
    await p.getByTestId("view-overview").waitFor();
  };

  it("logs in with an operator token into a session cookie the page's scripts cannot read", async () => {
    await page.goto(`${base}/admin`);
    await page.getByTestId("login-token").waitFor();
    await shot("login");
    await page.getByTestId("login-token").fill("not-a-token");
    await page.getByTestId("login-submit").click();
    await page.getByText("Unknown token.").waitFor();
    await login(page, ADMIN_TOKEN);
    await page.getByTestId("who").filter({ hasText: "admin · operator" }).waitFor();
    const cookies = await operator.cookies(`${base}/admin/`);
    expect(cookies).toEqual([expect.objectContaining({ name: "tether_admin_session", httpOnly: true, sameSite: "Strict", path: "/admin" })]);
    expect(await page.evaluate(() => document.cookie)).toBe("");
  });

  it("shows a lane's queue grow as writes arrive while no drainer runs", async () => {
    await go("overview");
    const before = Number((await laneCell(page, 2).textContent()) ?? "0");
    for (let i = 0; i < 3; i++) await annotate({ user: "acct:grow@example.com", uri: "https://example.com/grow", text: `write ${i}` });
    // A maintenance sample (as a drainer's maintenance would take) for the queue-length chart.
    await runMaintenance(ctx.db, { sampleIntervalMs: 0 });
    await page.getByRole("button", { name: "Refresh" }).click();
    await page.waitForFunction(
      // The sync lane's row (the collection's fan-out lane has a row of its own, listed first).
      (n) => Array.from(document.querySelectorAll('[data-testid="overview-lanes"] tbody tr')).find((tr) => tr.textContent?.includes("sync_annotation"))?.querySelector("td:nth-child(3)")?.textContent === String(n),
      before + 3,
    );
    await shot("overview");
  });

  it("pauses a lane with a reason after confirming, and resumes it", async () => {
    await go("lanes");
    await page.getByTestId("pause-sync_annotation").click();
    await page.getByTestId("confirm-dialog").waitFor();
    await shot("lanes-pause-confirm");
    await page.getByTestId("confirm-input").fill("Elasticsearch upgrade");
    await page.getByTestId("confirm-ok").click();
    await page.getByTestId("resume-sync_annotation").waitFor();
    await page.getByTestId("lanes").filter({ hasText: "Elasticsearch upgrade" }).waitFor();
    expect((await sql<{ reason: string }>`SELECT reason FROM tether.paused_name WHERE name = 'sync_annotation'`.execute(ctx.db)).rows).toEqual([{ reason: "Elasticsearch upgrade" }]);
    await shot("lanes-paused");
    await page.getByTestId("resume-sync_annotation").click();
    await page.getByTestId("confirm-ok").click();
    await page.getByTestId("pause-sync_annotation").waitFor();
    expect((await sql`SELECT 1 FROM tether.paused_name`.execute(ctx.db)).rows).toEqual([]);
  });

  it("retries a parked job and sees it drain", async () => {
    const id = await annotate({ user: "acct:parked@example.com", uri: "https://example.com/p", text: "parked once" });
    await sql`DELETE FROM tether.job WHERE kwargs->>'id' <> ${id}`.execute(ctx.db);
    // A drainer that handles no collection parks the job for real, with its reason.
    expect((await new Drainer({ db: ctx.db, sink: ctx.sink, collections: [] }).drainOnce()).parked).toBe(1);
    await go("dead?reason=parked");
    const row = page.locator('[data-testid="dead-jobs"] tr', { hasText: "unknown job name" });
    await row.waitFor();
    await shot("dead-jobs");
    await row.getByRole("checkbox").check();
    await page.getByTestId("retry-selected").click();
    await page.getByTestId("confirm-ok").click();
    await page.getByText("1 job(s) retried").waitFor();
    // The toast shows before the list re-renders: wait for the list itself to say it is empty.
    await page.getByTestId("dead-jobs").filter({ hasText: "No parked or expired job." }).waitFor();
    const drained = await new Drainer({ db: ctx.db, sink: ctx.sink, collections: [annotations] }).drainOnce();
    expect(drained.claimed).toBe(1);
    await go(`trace?collection=annotation&id=${id}`);
    await page.locator('[data-testid="trace-verdict"][data-verdict="in_sync"]').waitFor();
    // The history, newest first, tells the story: enqueued, parked with its reason, retried from the dead-letter table, synced.
    await expect.poll(() => page.getByTestId("trace-events").textContent(), POLL).toMatch(/synced.*enqueued.*retried from the dead-letter table.*parked.*unknown job name.*enqueued/s);
    const kinds = await page.locator('[data-testid="trace-events"] tbody tr td:nth-child(2)').allTextContents();
    expect(kinds).toEqual(["synced", "enqueued", "parked", "enqueued"]);
  });

  it("starts a re-index by user after confirming and shows its jobs", async () => {
    await sql`DELETE FROM tether.job`.execute(ctx.db);
    await go("reindex");
    await page.getByTestId("reindex-scope").selectOption("user");
    await page.getByTestId("reindex-value").fill("acct:grow@example.com");
    await shot("reindex");
    await page.getByTestId("reindex-submit").click();
    await page.getByTestId("confirm-ok").click();
    await page.getByText("Enqueued 3 job(s) at priority 100, tag reindex.").waitFor();
    await page.getByTestId("reindex-jobs-link").click();
    await page.getByTestId("view-jobs").waitFor();
    const rows = page.locator('[data-testid="jobs"] tbody tr');
    await expect.poll(() => rows.count(), POLL).toBe(3);
    await expect.poll(() => rows.filter({ hasText: "reindex" }).count(), POLL).toBe(3);
    await shot("jobs");
  });

  it("traces an entity whose document was deleted behind Tether's back and says so", async () => {
    const id = await annotate({ user: "acct:lost@example.com", uri: "https://example.com/lost", text: "will vanish" });
    const del = await fetch(`${ctx.elasticsearchUrl}/${ctx.sink.indexName(annotations.index)}/_doc/${id}?refresh=true`, { method: "DELETE" });
    expect(del.status).toBe(200);
    await go("trace");
    await page.getByTestId("trace-id").fill(id);
    await page.getByTestId("trace-submit").click();
    await page.locator('[data-testid="trace-verdict"][data-verdict="missing"]').waitFor();
    await page.getByTestId("trace-explanation").filter({ hasText: /Elasticsearch has no document: it was deleted behind Tether's back/ }).waitFor();
    await shot("trace-missing");
  });

  it("repairs content drift from the trace with a forced re-index, and the trace says in sync after the drain", async () => {
    const id = await annotate({ user: "acct:drift@example.com", uri: "https://example.com/drift", text: "the row's text" });
    const drainer = new Drainer({ db: ctx.db, sink: ctx.sink, collections: [annotations] });
    await drainer.drainOnce();
    const docUrl = `${ctx.elasticsearchUrl}/${ctx.sink.indexName(annotations.index)}/_doc/${id}`;
    const src = (await (await fetch(docUrl)).json()) as { _source: Record<string, unknown>; _version: number };
    // The same version (external_gte takes an equal one), other text: an edit nothing recorded.
    const put = await fetch(`${docUrl}?version=${src._version}&version_type=external_gte&refresh=true`, { method: "PUT", headers: { "content-type": "application/json" }, body: JSON.stringify({ ...src._source, text: "edited behind our back" }) });
    expect(put.status).toBe(200);
    await go(`trace?collection=annotation&id=${id}`);
    await expect(page.getByTestId("trace-verdict").getAttribute("data-verdict")).resolves.toBe("content_differs");
    await page.getByTestId("trace-reindex").click();
    await expect(page.getByTestId("confirm-dialog").textContent()).resolves.toMatch(/forced job/);
    await page.getByTestId("confirm-ok").click();
    await page.getByText("1 job enqueued").waitFor();
    for (let r = await drainer.drainOnce(); r.claimed > 0; r = await drainer.drainOnce());
    await go(`trace?collection=annotation&id=${id}`);
    await expect(page.getByTestId("trace-verdict").getAttribute("data-verdict")).resolves.toBe("in_sync");
    await expect(page.getByTestId("trace-reindex").count()).resolves.toBe(0);
  });

  it("renders an annotation whose text is markup as text, running nothing", async () => {
    const id = await annotate({ user: "acct:mallory@example.com", uri: "https://example.com/x", text: XSS });
    await go(`trace?collection=annotation&id=${id}`);
    const cell = page.locator('[data-testid="trace-row"] tr', { hasText: "text" }).locator("td").nth(1);
    await expect.poll(() => cell.textContent(), POLL).toBe(XSS);
    expect(await page.locator("img").count()).toBe(0);
    expect(dialogs).toEqual([]);
    await shot("trace-xss");
  });

  it("starts a verify run and shows its progress and the drift it found", async () => {
    // Drift of its own, whatever earlier tests left (their drains repair what they find due): a
    // row written without its direct sync, and no drainer running.
    const { row } = await createWriter().createWithJob(ctx.db, annotations, { userid: "acct:unseen@example.com", target_uri: "https://example.com/unseen", text: "never indexed" }, { directSync: false });
    const id = String(row!.id);
    await go("verify");
    await page.getByTestId("verify-start").click();
    await page.getByTestId("confirm-ok").click();
    await page.locator('[data-testid="verify-runs"] tr', { hasText: "done" }).waitFor();
    await page.getByTestId("verify-results").locator("tr", { hasText: "missing" }).filter({ hasText: id }).waitFor();
    await shot("verify");
  });

  it("lists drainers, and the audit log of every action taken above", async () => {
    const hb = new DrainerHeartbeat({ db: ctx.db, version: "0.1.0", host: "drainer-1" });
    await hb.start();
    try {
      const drainer = new Drainer({ db: ctx.db, sink: ctx.sink, collections: [annotations] });
      drainer.on("batch", (r) => hb.recordPass(r));
      await drainer.drainUntilEmpty();
      await hb.beat();
      await go("drainers");
      await page.locator('[data-testid="drainers"] tr', { hasText: "drainer-1" }).getByText("alive").waitFor();
      await shot("drainers");
      // The overview's charts once a drainer has completed jobs and maintenance has sampled.
      await runMaintenance(ctx.db, { sampleIntervalMs: 0 });
      await go("overview");
      await page.locator('[data-testid="chart-completion"] svg rect').first().waitFor({ state: "attached" });
      await page.locator('[data-testid="chart-queue"] svg path').waitFor({ state: "attached" });
      await shot("overview-charts");
    } finally {
      await hb.stop();
    }
    await go("audit");
    for (const action of ["lane.pause", "lane.resume", "dead_jobs.retry", "reindex", "verify.start", "session.login"]) {
      await page.getByTestId("audit").filter({ hasText: action }).waitFor();
    }
    await shot("audit");
  });

  it("lets a viewer look but not act", async () => {
    const viewer = await browser.newContext({ viewport: { width: 1366, height: 768 } });
    viewer.setDefaultTimeout(POLL.timeout);
    try {
      const p = await viewer.newPage();
      await login(p, VIEWER_TOKEN);
      await go("lanes", p);
      await p.locator('[data-testid="pause-sync_annotation"]:disabled').waitFor();
      await shot("lanes-viewer", p);
      // Even a hand-made request with the session's own CSRF token is refused.
      const status = await p.evaluate(async () => {
        const s = (await (await fetch("session")).json()) as { csrfToken: string };
        const r = await fetch("lanes/sync_annotation/pause", { method: "POST", headers: { "content-type": "application/json", "x-csrf-token": s.csrfToken }, body: JSON.stringify({ reason: "viewer" }) });
        return r.status;
      });
      expect(status).toBe(403);
      expect((await sql`SELECT 1 FROM tether.paused_name`.execute(ctx.db)).rows).toEqual([]);
    } finally {
      await viewer.close();
    }
  });

  it("cuts a 10 kB error short in every table, shows the whole of it on demand, and keeps the page short", async () => {
    const id = await annotate({ user: "acct:long@example.com", uri: "https://example.com/long", text: "refused" });
    await sql`DELETE FROM tether.job WHERE kwargs->>'id' <> ${id}`.execute(ctx.db);
    expect((await new Drainer({ db: ctx.db, sink: ctx.sink, collections: [] }).drainOnce()).parked).toBe(1);
    // A mapping refusal quoting the value, as the engine words it, 10 kB long and unbroken.
    const error = `mapper_parsing_exception: failed to parse field [text] of type [keyword] in document with id '${id}'. Preview of field's value: '${"x".repeat(10_240)}'`;
    await sql`UPDATE tether.dead_job SET last_error = ${error} WHERE kwargs->>'id' = ${id}`.execute(ctx.db);
    const height = () => page.evaluate(() => document.documentElement.scrollHeight);

    await go("dead?reason=parked");
    const row = page.locator('[data-testid="dead-jobs"] tr', { hasText: "mapper_parsing_exception" });
    await row.getByText("show all 10,").waitFor();
    expect(await height()).toBeLessThan(1_200);
    await row.getByText("show all 10,").click();
    const full = row.getByTestId("clip-full");
    await full.waitFor();
    expect(await full.textContent()).toBe(error);
    expect(await height()).toBeLessThan(1_600);
    await shot("dead-jobs-long-error");

    await go(`trace?collection=annotation&id=${id}`);
    await page.getByText("show all 10,").waitFor();
    expect(await height()).toBeLessThan(2_000);
    await sql`DELETE FROM tether.dead_job WHERE kwargs->>'id' = ${id}`.execute(ctx.db);
  });

  it("refuses a cross-site POST that rides on the session cookie without the CSRF token", async () => {
    // Another site (another port is the same "site" for SameSite, so the cookie is sent): only
    // the CSRF token, which that page cannot read, stands between it and the action.
    const evil: Server = createServer((_req, res) => {
      res.setHeader("content-type", "text/html");
      res.end(`<form method="POST" action="${base}/admin/lanes/sync_annotation/pause" enctype="text/plain"><input name='{"reason":"evil","x":"' value='"}'></form><script>document.forms[0].submit()</script>`);
    });
    evil.listen(0, "127.0.0.1");
    await once(evil, "listening");
    try {
      const answer = page.waitForResponse((r) => r.url().endsWith("/admin/lanes/sync_annotation/pause"));
      await page.goto(`http://127.0.0.1:${(evil.address() as AddressInfo).port}/`);
      const res = await answer;
      expect(res.status()).toBe(403);
      expect(await res.json()).toMatchObject({ error: "forbidden", message: expect.stringContaining("CSRF") });
      expect((await sql`SELECT 1 FROM tether.paused_name`.execute(ctx.db)).rows).toEqual([]);
    } finally {
      await new Promise<void>((resolve) => evil.close(() => resolve()));
    }
    expect(pageErrors).toEqual([]);
  });

  it("filters the audit log by outcome, showing each refusal above with whose it was", async () => {
    await go("audit");
    const filter = page.getByTestId("audit-filter");
    await filter.locator('select[name="outcome"]').selectOption("refused");
    await filter.getByRole("button", { name: "Filter" }).click();
    await page.waitForURL(/#\/audit\?outcome=refused$/);
    const rows = page.locator('[data-testid="audit"] tbody tr');
    // The view re-renders after the hash changed: wait until every row shown is a refusal.
    await expect.poll(async () => ({ rows: await rows.count(), others: await rows.filter({ hasNotText: "refused" }).count() }), POLL).toEqual({ rows: expect.any(Number), others: 0 });
    expect(await rows.count()).toBeGreaterThanOrEqual(2);
    // The viewer's pause, and the cross-site form's CSRF failure with the operator's session.
    await rows.filter({ hasText: "lane.pause" }).filter({ hasText: "viewer" }).filter({ hasText: "403 refused" }).first().waitFor();
    await rows.filter({ hasText: "lane.pause" }).filter({ hasText: "admin" }).filter({ hasText: "CSRF" }).first().waitFor();
    await shot("audit-refused");
  });
});
