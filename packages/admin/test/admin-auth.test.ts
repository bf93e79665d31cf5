import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { sql } from "kysely";
import { CONTENT_SECURITY_POLICY, parseAdminTokens } from "../src/index.js";
import { asOperator, asViewer, createAdminTestApp, OPERATOR, VIEWER, type AdminTestApp } from "./support/admin-test-app.js";

describe("who may use the admin console", () => {
  let t: AdminTestApp;
  beforeAll(async () => {
    t = await createAdminTestApp();
  });
  afterAll(() => t.close());

  const paused = async () => (await sql<{ name: string }>`SELECT name FROM tether.paused_name`.execute(t.db)).rows.map((r) => r.name);

  it("answers 401 without a token or with a wrong one, on reads and actions alike", async () => {
    for (const headers of [{}, { authorization: "Bearer nope-nope-nope" }, { authorization: `Basic ${OPERATOR.token}` }]) {
      for (const req of [
        { method: "GET" as const, url: "/admin/overview" },
        { method: "GET" as const, url: "/admin/audit" },
        { method: "POST" as const, url: "/admin/lanes/sync_annotation/pause", payload: { reason: "x" } },
      ]) {
        const res = await t.app.inject({ ...req, headers });
        expect(res.statusCode, `${req.url} ${JSON.stringify(headers)}`).toBe(401);
        expect(res.json()).toMatchObject({ error: "unauthorized" });
      }
    }
    expect(await paused()).toEqual([]);
  });

  it("lets a viewer read but answers 403 to a viewer's action, and audits the refusal", async () => {
    expect((await t.app.inject({ method: "GET", url: "/admin/lanes", headers: asViewer })).statusCode).toBe(200);
    const res = await t.app.inject({ method: "POST", url: "/admin/lanes/sync_annotation/pause", headers: asViewer, payload: { reason: "try" } });
    expect(res.statusCode).toBe(403);
    expect(res.json()).toMatchObject({ error: "forbidden", message: expect.stringContaining("operator") });
    expect(await paused()).toEqual([]);
    const audit = await t.app.inject({ method: "GET", url: "/admin/audit?action=lane.pause", headers: asViewer });
    expect(audit.json().items[0]).toMatchObject({ actor: VIEWER.name, role: "viewer", action: "lane.pause", status: 403, params: { name: "sync_annotation" } });
    // Refused before its body was even read: the body is not recorded.
  });

  it("logs a browser in with a token into an HttpOnly SameSite=Strict cookie, and refuses its mutating requests without the CSRF token", async () => {
    const bad = await t.app.inject({ method: "POST", url: "/admin/session", payload: { token: "not-a-token" } });
    expect(bad.statusCode).toBe(401);
    const login = await t.app.inject({ method: "POST", url: "/admin/session", payload: { token: OPERATOR.token } });
    expect(login.statusCode).toBe(200);
    const { csrfToken, name, role } = login.json();
    expect({ name, role }).toEqual({ name: OPERATOR.name, role: "operator" });
    const setCookie = String(login.headers["set-cookie"]);
    expect(setCookie).toMatch(/^tether_admin_session=[A-Za-z0-9_-]{40,};/);
    expect(setCookie).toContain("HttpOnly");
    expect(setCookie).toContain("SameSite=Strict");
    expect(setCookie).toContain("Path=/admin");
    const cookie = setCookie.split(";")[0]!;

    expect((await t.app.inject({ method: "GET", url: "/admin/overview", headers: { cookie } })).statusCode).toBe(200);
    const noCsrf = await t.app.inject({ method: "POST", url: "/admin/lanes/sync_annotation/pause", headers: { cookie }, payload: { reason: "csrf" } });
    expect(noCsrf.statusCode).toBe(403);
    expect(noCsrf.json()).toMatchObject({ error: "forbidden", message: expect.stringContaining("x-csrf-token") });
    const wrongCsrf = await t.app.inject({ method: "POST", url: "/admin/lanes/sync_annotation/pause", headers: { cookie, "x-csrf-token": "guess" }, payload: { reason: "csrf" } });
    expect(wrongCsrf.statusCode).toBe(403);
    expect(await paused()).toEqual([]);

    const ok = await t.app.inject({ method: "POST", url: "/admin/lanes/sync_annotation/pause", headers: { cookie, "x-csrf-token": csrfToken }, payload: { reason: "csrf" } });
    expect(ok.statusCode).toBe(200);
    expect(await paused()).toEqual(["sync_annotation"]);
    await t.app.inject({ method: "POST", url: "/admin/lanes/sync_annotation/resume", headers: asOperator, payload: {} });

    const out = await t.app.inject({ method: "DELETE", url: "/admin/session", headers: { cookie, "x-csrf-token": csrfToken } });
    expect(out.statusCode).toBe(204);
    expect((await t.app.inject({ method: "GET", url: "/admin/overview", headers: { cookie } })).statusCode).toBe(401);
  });

  it("never writes a token to the log, even on failed logins and refused requests", async () => {
    await t.app.inject({ method: "POST", url: "/admin/session", payload: { token: OPERATOR.token } });
    await t.app.inject({ method: "POST", url: "/admin/session", payload: { token: "wrong-token-abcdefgh" } });
    await t.app.inject({ method: "GET", url: "/admin/overview", headers: asViewer });
    await t.app.inject({ method: "POST", url: "/admin/lanes/x/pause", headers: asViewer, payload: { reason: "r" } });
    await t.app.inject({ method: "GET", url: "/admin/overview", headers: { authorization: "Bearer wrong-token-abcdefgh" } });
    const all = t.logs.join("\n");
    expect(t.logs.length).toBeGreaterThan(0);
    for (const secret of [OPERATOR.token, VIEWER.token, "wrong-token-abcdefgh"]) expect(all).not.toContain(secret);
    const audit = await sql<{ text: string }>`SELECT string_agg(t::text, ' ') AS text FROM tether.audit_log t`.execute(t.db);
    for (const secret of [OPERATOR.token, VIEWER.token, "wrong-token-abcdefgh"]) expect(audit.rows[0]!.text).not.toContain(secret);
  });

  it("serves an OpenAPI document of every route without a token, and a strict Content-Security-Policy", async () => {
    const res = await t.app.inject({ method: "GET", url: "/admin/openapi.json" });
    expect(res.statusCode).toBe(200);
    const doc = res.json();
    expect(doc.openapi).toMatch(/^3\./);
    for (const path of ["/admin/overview", "/admin/lanes/{name}/pause", "/admin/jobs", "/admin/jobs/cancel", "/admin/dead-jobs/retry", "/admin/reindex", "/admin/verify-runs", "/admin/trace/{collection}/{id}", "/admin/drainers", "/admin/audit", "/admin/queue", "/admin/alerts"]) {
      expect(Object.keys(doc.paths), path).toContain(path);
    }
    expect(doc.paths["/admin/jobs"].get.parameters.map((p: { name: string }) => p.name)).toEqual(expect.arrayContaining(["name", "tag", "priority", "entityId", "state", "cursor", "limit"]));
    expect(res.headers["content-security-policy"]).toBe(CONTENT_SECURITY_POLICY);
    expect(CONTENT_SECURITY_POLICY).toContain("script-src 'self'");
    expect(CONTENT_SECURITY_POLICY).not.toContain("unsafe-inline");
  });

  it("answers 503 on every admin route when no token is configured", async () => {
    const bare = await createAdminTestApp({ tokens: [] });
    try {
      const res = await bare.app.inject({ method: "GET", url: "/admin/overview", headers: asOperator });
      expect(res.statusCode).toBe(503);
      expect(res.json()).toMatchObject({ error: "admin_disabled" });
    } finally {
      await bare.close();
    }
  });

  it("parses named tokens with roles, and names what is wrong in a bad one", () => {
    expect(parseAdminTokens("alice:operator:s3cret:with:colons, bob:viewer:another-one")).toEqual([
      { name: "alice", role: "operator", token: "s3cret:with:colons" },
      { name: "bob", role: "viewer", token: "another-one" },
    ]);
    expect(() => parseAdminTokens("just-a-token")).toThrow(/tokens\[0\]/);
  });
});
