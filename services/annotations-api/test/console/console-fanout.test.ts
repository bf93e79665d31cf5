/// <reference lib="dom" />
import type { AddressInfo } from "node:net";
import { join } from "node:path";
import Fastify, { type FastifyInstance } from "fastify";
import { sql } from "kysely";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Browser, Page } from "playwright-core";
import { tetherAdmin } from "@tether/admin";
import { Drainer, enableCapture, pauseName, resumeName } from "@tether/core/internal";
import { createShopContext, type ShopContext } from "../../../../test/support/shop-context.js";
import { shopProducts } from "../../../../test/support/shop.js";
import { BROWSER_HOOK_TIMEOUT_MS, BROWSER_TEST_TIMEOUT_MS, buildConsolePage, launchChromium, POLL, SCREENSHOTS } from "./browser.js";

const TOKEN = "operator-token-for-fan-outs";

/**
 * The console of an application whose documents read other tables (the shop's products read
 * their category): fan-outs in progress on the overview, the fan-out lane among the lanes, and the
 * trace saying which row of which table, and which fan-out, re-synced a product.
 */
describe("the admin console and fan-outs, in a real Chromium", { timeout: BROWSER_TEST_TIMEOUT_MS }, () => {
  let ctx: ShopContext;
  let app: FastifyInstance;
  let browser: Browser;
  let page: Page;
  let base: string;
  const pageErrors: string[] = [];
  let category: string;
  let ids: string[];

  beforeAll(async () => {
    buildConsolePage();
    ctx = await createShopContext();
    await enableCapture(ctx.db, shopProducts, { graceMs: 0 });
    app = Fastify();
    await app.register(tetherAdmin, { prefix: "/admin", db: ctx.db, sink: ctx.sink, collections: [shopProducts], tokens: [{ name: "ops", role: "operator", token: TOKEN }] });
    await app.listen({ port: 0, host: "127.0.0.1" });
    base = `http://127.0.0.1:${(app.server.address() as AddressInfo).port}`;
    browser = await launchChromium();
    const context = await browser.newContext({ viewport: { width: 1366, height: 768 } });
    context.setDefaultTimeout(POLL.timeout);
    page = await context.newPage();
    page.on("pageerror", (e) => pageErrors.push(e.message));
    await page.goto(`${base}/admin/`);
    await page.getByTestId("login-token").fill(TOKEN);
    await page.getByTestId("login-submit").click();
    await page.getByTestId("view-overview").waitFor();

    // A category read by 25 products, all synced, then renamed by plain SQL: one fan-out job.
    category = (await sql<{ id: string }>`INSERT INTO shop_category (name) VALUES ('Boots') RETURNING id::text`.execute(ctx.db)).rows[0]!.id;
    ids = (await sql<{ id: string }>`INSERT INTO shop_product (name, category_id) SELECT 'boot ' || g, ${category}::bigint FROM generate_series(1, 25) g RETURNING id::text`.execute(ctx.db)).rows.map((r) => r.id);
    await drainer().drainUntilEmpty();
    await sql`UPDATE shop_category SET name = 'Wellies' WHERE id = ${category}::bigint`.execute(ctx.db);
  }, BROWSER_HOOK_TIMEOUT_MS);
  afterAll(async () => {
    await browser?.close();
    await app?.close();
    await ctx?.close();
  }, BROWSER_HOOK_TIMEOUT_MS);

  const drainer = () => new Drainer({ db: ctx.db, sink: ctx.sink, collections: [shopProducts], fanoutChunkSize: 10 });
  const shot = (name: string) => page.screenshot({ path: join(SCREENSHOTS, `${name}.png`), fullPage: true });
  const go = async (hash: string) => {
    await page.goto("about:blank");
    await page.goto(`${base}/admin/#/${hash}`);
    await page.locator(`[data-testid="view-${hash.split("?")[0]}"]`).waitFor();
  };
  const cells = (testid: string, hasText: string) => page.locator(`[data-testid="${testid}"] tbody tr`, { hasText }).locator("td").allTextContents();

  it("lists the fan-out lane beside the sync lane, and pauses and resumes it", async () => {
    await go("lanes");
    const lane = page.locator('[data-testid="lanes"] tr', { hasText: "fanout_shop_product" });
    await lane.filter({ hasText: "fan-out" }).waitFor();
    await page.getByTestId("pause-fanout_shop_product").click();
    await page.getByTestId("confirm-input").fill("category import");
    await page.getByTestId("confirm-ok").click();
    await page.getByTestId("resume-fanout_shop_product").waitFor();
    await shot("lanes-fanout-paused");
    expect((await sql<{ name: string; reason: string }>`SELECT name, reason FROM tether.paused_name`.execute(ctx.db)).rows).toEqual([{ name: "fanout_shop_product", reason: "category import" }]);
    await page.getByTestId("resume-fanout_shop_product").click();
    await page.getByTestId("confirm-ok").click();
    await page.getByTestId("pause-fanout_shop_product").waitFor();
    expect((await sql`SELECT 1 FROM tether.paused_name`.execute(ctx.db)).rows).toEqual([]);
  });

  it("shows the rename's fan-out in progress on the overview, done / total, and its work apart from live work", async () => {
    // One chunk of 10, the sync lane paused so the sync jobs it enqueued wait.
    await pauseName(ctx.db, shopProducts.jobName, "console test");
    expect((await drainer().drainOnce()).fanout).toMatchObject({ expanded: 10, more: true });
    await go("overview");
    await page.locator('[data-testid="overview-fanouts"] tbody tr', { hasText: "category" }).waitFor();
    const row = await cells("overview-fanouts", "category");
    expect(row.slice(0, 6)).toEqual(["shop_product", "category", category, "10 / 25", "due", "0"]);
    // The fan-out job and the 10 sync jobs it enqueued; no live work.
    expect(await page.getByTestId("stat-fanout").locator(".value").textContent()).toBe("11");
    await shot("overview-fanouts");
  });

  it("traces a product: the change still to reach it, the fan-out's progress, and, once drained, which row and which fan-out rewrote it", async () => {
    const [first, last] = [ids[0]!, ids.at(-1)!];
    await go(`trace?collection=shop_product&id=${last}`);
    await page.getByTestId("trace-pending-changes").waitFor();
    expect((await cells("trace-pending-changes", "shop_category")).filter((c, i) => i !== 3)).toEqual(["shop_category", `id = ${category}`, "category", "queued"]);
    const fanout = await cells("trace-fanouts", "category");
    expect([fanout[1], fanout[2], fanout[3], fanout[7]]).toEqual(["category", category, "10 / 25", "still to come"]);
    await page.getByTestId("trace-explanation").filter({ hasText: `A change of shop_category.id = ${category}` }).waitFor();
    await shot("trace-fanout-pending");

    await go(`trace?collection=shop_product&id=${first}`);
    await expect.poll(async () => (await cells("trace-fanouts", "category"))[7], POLL).toBe("bumped");
    const via = `shop_category.id = ${category} (fan-out ${fanout[0]})`;
    expect((await cells("trace-jobs", "fanout:category.update")).at(-1)).toBe(via);

    await resumeName(ctx.db, shopProducts.jobName);
    expect((await drainer().drainUntilEmpty()).error).toBeUndefined();
    await go(`trace?collection=shop_product&id=${first}`);
    await page.locator('[data-testid="trace-verdict"][data-verdict="in_sync"]').waitFor();
    expect(await page.getByTestId("trace-pending-changes").count()).toBe(0);
    const history = page.locator('[data-testid="trace-events"] tbody tr');
    await expect.poll(() => history.first().locator("td").allTextContents(), POLL).toEqual([expect.any(String), "repaired", "fanout:category.update", "10", expect.any(String), via, ""]);
    await shot("trace-fanout-history");
    expect(pageErrors).toEqual([]);
  });
});
