import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { sql } from "kysely";
import { annotations } from "@tether/annotations";
import { createDb } from "@tether/core";
import { buildApp } from "../src/app.js";
import { createApiContext, type ApiContext } from "./support/api-context.js";

describe("the annotation routes", () => {
  let ctx: ApiContext;
  beforeAll(async () => {
    ctx = await createApiContext();
  });
  afterAll(() => ctx.close());

  const create = (payload: unknown) => ctx.app.inject({ method: "POST", url: "/api/annotations", payload: payload as object });

  it("create an annotation with a job in the same transaction and sync it to Elasticsearch directly", async () => {
    const res = await create({ user: "acct:ann@example.com", uri: "https://example.com/a", text: "hello", tags: ["x", "y"] });
    expect(res.statusCode).toBe(201);
    const body = res.json();
    expect(body).toMatchObject({ version: expect.any(Number), user: "acct:ann@example.com", group: "__world__", uri: "https://example.com/a", text: "hello", tags: ["x", "y"] });
    expect(body.id).toMatch(/^[0-9]+$/);
    expect(res.headers.location).toBe(`/api/annotations/${body.id}`);

    const jobs = (await ctx.jobs()).filter((j) => j.kwargs.id === body.id);
    expect(jobs).toHaveLength(1);
    expect(jobs[0]).toMatchObject({ name: annotations.jobName, tag: "live", priority: 1 });
    const doc = await ctx.sink.client.get<{ text: string; tether: { version: number } }>({ index: ctx.sink.indexName(annotations.index), id: body.id });
    expect(doc._source?.text).toBe("hello");
    expect(doc._version).toBe(body.version);
  });

  it("read an annotation back by id", async () => {
    const created = (await create({ user: "acct:read", uri: "https://example.com/r" })).json();
    const res = await ctx.app.inject({ method: "GET", url: `/api/annotations/${created.id}` });
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual(created);
  });

  it("edit an annotation, bumping its version and its updated time in the same statement", async () => {
    const created = (await create({ user: "acct:edit", uri: "https://example.com/e", text: "before" })).json();
    const res = await ctx.app.inject({ method: "PATCH", url: `/api/annotations/${created.id}`, payload: { text: "after", tags: ["t"] } });
    expect(res.statusCode).toBe(200);
    const body = res.json();
    expect(body).toMatchObject({ id: created.id, text: "after", tags: ["t"], uri: "https://example.com/e" });
    expect(body.version).toBeGreaterThan(created.version);
    expect(Date.parse(body.updated)).toBeGreaterThan(Date.parse(created.updated));
    const doc = await ctx.sink.client.get<{ text: string }>({ index: ctx.sink.indexName(annotations.index), id: created.id });
    expect(doc._version).toBe(body.version);
    expect(doc._source?.text).toBe("after");
  });

  it("soft-delete an annotation: 204, then 404 on read, edit and a second delete, and a tombstone downstream", async () => {
    const created = (await create({ user: "acct:del", uri: "https://example.com/d" })).json();
    const del = await ctx.app.inject({ method: "DELETE", url: `/api/annotations/${created.id}` });
    expect(del.statusCode).toBe(204);
    expect(del.body).toBe("");
    for (const req of [
      { method: "GET" as const, url: `/api/annotations/${created.id}` },
      { method: "PATCH" as const, url: `/api/annotations/${created.id}`, payload: { text: "zombie" } },
      { method: "DELETE" as const, url: `/api/annotations/${created.id}` },
    ]) {
      const res = await ctx.app.inject(req);
      expect(res.statusCode, `${req.method}`).toBe(404);
      expect(res.json()).toMatchObject({ error: "not_found" });
    }
    const row = await sql<{ deleted_at: Date | null; version: string }>`SELECT deleted_at, version FROM annotation WHERE id = ${created.id}`.execute(ctx.db);
    expect(row.rows[0]?.deleted_at).not.toBeNull();
    expect(Number(row.rows[0]?.version)).toBeGreaterThan(created.version);
    const doc = await ctx.sink.client.get<{ tether: { deleted: boolean } }>({ index: ctx.sink.indexName(annotations.index), id: created.id });
    expect(doc._source?.tether.deleted).toBe(true);
  });

  it("answer 404 for an id that never existed", async () => {
    for (const method of ["GET", "DELETE"] as const) {
      const res = await ctx.app.inject({ method, url: "/api/annotations/987654321" });
      expect(res.statusCode).toBe(404);
    }
    const res = await ctx.app.inject({ method: "PATCH", url: "/api/annotations/987654321", payload: { text: "x" } });
    expect(res.statusCode).toBe(404);
  });

  it("answer 400 naming the id when it is not a positive integer", async () => {
    for (const id of ["abc", "0", "-1", "1.5", "99999999999999999999", "1%3B%20DROP%20TABLE%20annotation"]) {
      const res = await ctx.app.inject({ method: "GET", url: `/api/annotations/${id}` });
      expect(res.statusCode, id).toBe(400);
      expect(res.json(), id).toMatchObject({ error: "validation", field: "id" });
    }
  });

  it("answer 400 naming the field for each kind of bad create body, and write nothing", async () => {
    const before = (await ctx.jobs()).length;
    const cases: [unknown, string][] = [
      [{ uri: "https://example.com" }, "user"],
      [{ user: "acct:x" }, "uri"],
      [{ user: "", uri: "https://example.com" }, "user"],
      [{ user: "acct:x", uri: 42 }, "uri"],
      [{ user: "acct:x", uri: "https://example.com", tags: "not-an-array" }, "tags"],
      [{ user: "acct:x", uri: "https://example.com", tags: ["ok", 7] }, "tags.1"],
      [{ user: "acct:x", uri: "https://example.com", tags: Array.from({ length: 51 }, (_, i) => `t${i}`) }, "tags"],
      [{ user: "acct:x", uri: "https://example.com", text: "a".repeat(10_001) }, "text"],
      [{ user: "acct:x", uri: "u".repeat(2049) }, "uri"],
      [{ user: "acct:x", uri: "https://example.com", colour: "red" }, "colour"],
      [{ user: "acct:x", uri: "https://example.com", text: "nul \u0000 inside" }, "text"],
      [{ user: "acct:x", uri: "https://example.com", id: 5 }, "id"],
      [{ user: "acct:x", uri: "https://example.com", version: 9 }, "version"],
    ];
    for (const [payload, field] of cases) {
      const res = await create(payload);
      expect(res.statusCode, JSON.stringify(payload).slice(0, 80)).toBe(400);
      const body = res.json();
      expect(body, JSON.stringify(payload).slice(0, 80)).toMatchObject({ error: "validation", field });
      expect(typeof body.message).toBe("string");
    }
    expect((await ctx.jobs()).length).toBe(before);
  });

  it("answer 400 for a patch with no fields, an unknown field, or a field that cannot be patched", async () => {
    const created = (await create({ user: "acct:p", uri: "https://example.com/p" })).json();
    const url = `/api/annotations/${created.id}`;
    const empty = await ctx.app.inject({ method: "PATCH", url, payload: {} });
    expect(empty.statusCode).toBe(400);
    expect(empty.json()).toMatchObject({ error: "validation", field: "body" });
    const user = await ctx.app.inject({ method: "PATCH", url, payload: { user: "acct:someone-else" } });
    expect(user.statusCode).toBe(400);
    expect(user.json()).toMatchObject({ field: "user" });
    const version = await ctx.app.inject({ method: "PATCH", url, payload: { version: 100 } });
    expect(version.json()).toMatchObject({ field: "version" });
    const row = await sql<{ version: string }>`SELECT version FROM annotation WHERE id = ${created.id}`.execute(ctx.db);
    expect(Number(row.rows[0]?.version)).toBe(created.version);
  });

  it("answer 400 for a body that is not JSON", async () => {
    const res = await ctx.app.inject({ method: "POST", url: "/api/annotations", headers: { "content-type": "application/json" }, payload: "{not json" });
    expect(res.statusCode).toBe(400);
    expect(res.json()).toMatchObject({ error: "invalid_json", field: "body" });
  });

  it("answer 413 for a body over the limit", async () => {
    const res = await create({ user: "acct:big", uri: "https://example.com", text: "x".repeat(70_000) });
    expect(res.statusCode).toBe(413);
    expect(res.json()).toMatchObject({ error: "payload_too_large" });
  });

  it("answer 404 JSON for an unknown route", async () => {
    const res = await ctx.app.inject({ method: "GET", url: "/api/nothing-here?x=1" });
    expect(res.statusCode).toBe(404);
    expect(res.json()).toEqual({ error: "not_found", message: "no route GET /api/nothing-here" });
  });

  it("report Postgres and Elasticsearch in /healthz as ok or down", async () => {
    const res = await ctx.app.inject({ method: "GET", url: "/healthz" });
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual({ status: "ok", postgres: "ok", elasticsearch: "ok", directSync: { breaker: "closed", consecutiveFailures: 0 } });
  });

  it("serve Prometheus text on /metrics with the API's and tether's counters", async () => {
    await create({ user: "acct:metrics", uri: "https://example.com/m" });
    const res = await ctx.app.inject({ method: "GET", url: "/metrics" });
    expect(res.statusCode).toBe(200);
    expect(res.headers["content-type"]).toMatch(/^text\/plain/);
    expect(res.body).toMatch(/^tether_api_requests_total\{.*route="\/api\/annotations".*\} \d+/m);
    expect(res.body).toMatch(/^tether_jobs_enqueued_total\{.*tag="live".*\} \d+/m);
    expect(res.body).toMatch(/^tether_direct_sync_total\{outcome="ok".*\} \d+/m);
  });

  describe("with Postgres unreachable", () => {
    const deadDb = createDb({ connectionString: "postgres://postgres@127.0.0.1:1/nowhere", max: 1 });
    afterAll(() => deadDb.destroy());

    it("answer 503 JSON to writes and reads instead of a fake success", async () => {
      const app = await buildApp({ db: deadDb, sink: ctx.sink });
      try {
        const post = await app.inject({ method: "POST", url: "/api/annotations", payload: { user: "acct:x", uri: "https://example.com" } });
        expect(post.statusCode).toBe(503);
        expect(post.json()).toMatchObject({ error: "database_unavailable" });
        const get = await app.inject({ method: "GET", url: "/api/annotations/1" });
        expect(get.statusCode).toBe(503);
        const health = await app.inject({ method: "GET", url: "/healthz" });
        expect(health.statusCode).toBe(503);
        expect(health.json()).toEqual({ status: "down", postgres: "down", elasticsearch: "ok", directSync: { breaker: "closed", consecutiveFailures: 0 } });
      } finally {
        await app.close();
      }
    });
  });
});
