import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { sql } from "kysely";
import type { FastifyInstance } from "fastify";
import { asViewer, createAdminTestApp, OPERATOR, VIEWER, type AdminTestApp } from "./support/admin-test-app.js";

const PAUSE = "/admin/lanes/sync_annotation/pause";

describe("console sessions in Postgres, and every refusal audited with who it was", () => {
  let t: AdminTestApp;
  let other: FastifyInstance;
  beforeAll(async () => {
    t = await createAdminTestApp();
    // A second replica of the API on the same database, sharing nothing else.
    other = await t.replica();
  });
  afterAll(() => t.close());

  const login = async (app: FastifyInstance, token: string) => {
    const res = await app.inject({ method: "POST", url: "/admin/session", payload: { token } });
    expect(res.statusCode, res.body).toBe(200);
    const cookieValue = String(res.headers["set-cookie"]).split(";")[0]!;
    return { cookie: cookieValue, value: cookieValue.split("=")[1]!, csrf: (res.json() as { csrfToken: string }).csrfToken };
  };
  const audit = async (query: string) => (await t.app.inject({ method: "GET", url: `/admin/audit?${query}`, headers: asViewer })).json().items as Record<string, unknown>[];
  const paused = async () => (await sql<{ name: string }>`SELECT name FROM tether.paused_name`.execute(t.db)).rows.map((r) => r.name);

  it("serves a session on a replica that did not create it, and a logout on one ends it on both", async () => {
    const s = await login(t.app, OPERATOR.token);
    const read = await other.inject({ method: "GET", url: "/admin/session", headers: { cookie: s.cookie } });
    expect(read.json()).toEqual({ name: OPERATOR.name, role: "operator", csrfToken: s.csrf });
    const act = await other.inject({ method: "POST", url: PAUSE, headers: { cookie: s.cookie, "x-csrf-token": s.csrf }, payload: { reason: "through the other replica" } });
    expect(act.statusCode, act.body).toBe(200);
    await other.inject({ method: "POST", url: "/admin/lanes/sync_annotation/resume", headers: { cookie: s.cookie, "x-csrf-token": s.csrf }, payload: {} });

    const out = await t.app.inject({ method: "DELETE", url: "/admin/session", headers: { cookie: s.cookie, "x-csrf-token": s.csrf } });
    expect(out.statusCode).toBe(204);
    for (const app of [t.app, other]) {
      const res = await app.inject({ method: "GET", url: "/admin/overview", headers: { cookie: s.cookie } });
      expect(res.statusCode).toBe(401);
      expect(res.json()).toEqual({ error: "unauthorized", message: expect.stringContaining("logged out") });
    }
    expect((await audit("action=session.logout&limit=1"))[0]).toMatchObject({ actor: OPERATOR.name, role: "operator", status: 204, outcome: "ok" });
    expect((await audit(`actor=${OPERATOR.name}&action=read&limit=2`)).map((a) => a.params)).toEqual([{ route: "GET /admin/overview" }, { route: "GET /admin/overview" }]);
  });

  it("stores neither the cookie nor the CSRF token, only the cookie's hash", async () => {
    const s = await login(t.app, VIEWER.token);
    const rows = await sql<{ text: string }>`SELECT t::text AS text, encode(id_hash, 'hex') || encode(token_mac, 'hex') AS hex FROM tether.console_session t`.execute(t.db);
    const all = JSON.stringify(rows.rows);
    for (const secret of [s.value, s.csrf, VIEWER.token, Buffer.from(s.value).toString("hex")]) expect(all).not.toContain(secret);
  });

  it("refuses an expired session with 401 and audits whose it was", async () => {
    const s = await login(t.app, OPERATOR.token);
    // The idle lifetime passing, by the database clock every replica shares.
    await sql`UPDATE tether.console_session SET expires_at = now() - interval '1 second' WHERE actor = ${OPERATOR.name} AND revoked_at IS NULL`.execute(t.db);
    const res = await other.inject({ method: "POST", url: PAUSE, headers: { cookie: s.cookie, "x-csrf-token": s.csrf }, payload: { reason: "too late" } });
    expect(res.statusCode).toBe(401);
    expect(res.json().message).toContain("expired");
    expect(await paused()).toEqual([]);
    expect((await audit("action=lane.pause&limit=1"))[0]).toMatchObject({ actor: OPERATOR.name, role: "operator", status: 401, outcome: "refused", result: { message: expect.stringContaining("expired") } });
  });

  it("revokes the sessions of a token that is no longer configured, on every replica", async () => {
    const s = await login(t.app, VIEWER.token);
    const withoutViewer = await t.replica({ tokens: [OPERATOR] });
    const res = await withoutViewer.inject({ method: "GET", url: "/admin/lanes", headers: { cookie: s.cookie } });
    expect(res.statusCode).toBe(401);
    expect(res.json().message).toContain("no longer configured");
    // The revocation is in Postgres: a replica that still has the token refuses the session too.
    expect((await t.app.inject({ method: "GET", url: "/admin/lanes", headers: { cookie: s.cookie } })).statusCode).toBe(401);
    const [row] = (await sql<{ revoked_reason: string }>`SELECT revoked_reason FROM tether.console_session WHERE revoked_at IS NOT NULL AND actor = ${VIEWER.name}`.execute(t.db)).rows;
    expect(row).toEqual({ revoked_reason: "token_removed" });
    expect((await audit(`actor=${VIEWER.name}&action=read&limit=1`))[0]).toMatchObject({ role: "viewer", status: 401, outcome: "refused", params: { route: "GET /admin/lanes" } });
  });

  it("audits every refused CSRF token with the session's identity: missing, empty, wrong and another session's", async () => {
    const mine = await login(t.app, OPERATOR.token);
    const foreign = await login(other, OPERATOR.token);
    const before = (await audit("outcome=refused&action=lane.pause")).length;
    const attempts: Record<string, string>[] = [{}, { "x-csrf-token": "" }, { "x-csrf-token": "guess" }, { "x-csrf-token": foreign.csrf }];
    for (const headers of attempts) {
      const res = await other.inject({ method: "POST", url: PAUSE, headers: { cookie: mine.cookie, ...headers }, payload: { reason: "forged" } });
      expect(res.statusCode).toBe(403);
      expect(res.json().message).toContain("CSRF");
    }
    expect(await paused()).toEqual([]);
    const rows = await audit("outcome=refused&action=lane.pause");
    expect(rows.length - before).toBe(attempts.length);
    for (const row of rows.slice(0, attempts.length)) expect(row).toMatchObject({ actor: OPERATOR.name, role: "operator", status: 403, params: { name: "sync_annotation" }, result: { error: "forbidden" } });
  });

  it("audits a viewer's refused action and an unknown token's attempt at one", async () => {
    const s = await login(t.app, VIEWER.token);
    expect((await t.app.inject({ method: "POST", url: PAUSE, headers: { cookie: s.cookie, "x-csrf-token": s.csrf }, payload: { reason: "viewer" } })).statusCode).toBe(403);
    expect((await t.app.inject({ method: "POST", url: PAUSE, headers: { authorization: "Bearer not-a-token-at-all" }, payload: { reason: "nobody" } })).statusCode).toBe(401);
    const [nobody, viewer] = await audit("outcome=refused&action=lane.pause&limit=2");
    expect(viewer).toMatchObject({ actor: VIEWER.name, role: "viewer", status: 403 });
    expect(nobody).toMatchObject({ actor: "unknown", role: "none", status: 401 });
  });

  it("filters the audit log by outcome, and refuses an outcome it does not know", async () => {
    await t.app.inject({ method: "POST", url: "/admin/lanes/sync_typo/pause", headers: { authorization: `Bearer ${OPERATOR.token}` }, payload: { reason: "typo" } });
    const byOutcome = Object.fromEntries(await Promise.all((["ok", "refused", "failed"] as const).map(async (o) => [o, await audit(`outcome=${o}&limit=500`)] as const)));
    expect(byOutcome.ok!.length).toBeGreaterThan(0);
    expect(byOutcome.refused!.length).toBeGreaterThan(0);
    expect(byOutcome.failed!.map((a) => a.status)).toEqual([404]);
    for (const a of byOutcome.ok!) expect(a.status as number).toBeLessThan(400);
    for (const a of byOutcome.refused!) expect([401, 403]).toContain(a.status);
    expect(byOutcome.ok!.length + byOutcome.refused!.length + byOutcome.failed!.length).toBe((await audit("limit=500")).length);
    const bad = await t.app.inject({ method: "GET", url: "/admin/audit?outcome=maybe", headers: asViewer });
    expect(bad.statusCode).toBe(400);
    expect(bad.json()).toMatchObject({ error: "validation", field: "outcome" });
  });
});
