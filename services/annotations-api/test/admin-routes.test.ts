import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { sql } from "kysely";
import { annotations } from "@tether/annotations";
import { queueStats } from "@tether/core";
import { admin, createApiContext, type ApiContext } from "./support/api-context.js";

describe("the admin routes", () => {
  let ctx: ApiContext;
  let ids: string[];
  beforeAll(async () => {
    ctx = await createApiContext();
    // Seven annotations with known owners and times; one soft-deleted (re-index covers its tombstone too).
    const r = await sql<{ id: string }>`
      INSERT INTO annotation (userid, groupid, target_uri, created, updated, deleted_at) VALUES
        ('acct:ann', 'g1', 'u1', '2026-01-01T00:00:00Z', '2026-03-01T00:00:00Z', NULL),
        ('acct:ann', 'g1', 'u2', '2026-01-15T00:00:00Z', '2026-01-15T00:00:00Z', NULL),
        ('acct:ann', 'g2', 'u3', '2026-02-01T00:00:00Z', '2026-02-01T00:00:00Z', now()),
        ('acct:bob', 'g2', 'u4', '2026-02-01T00:00:00Z', '2026-02-10T00:00:00Z', NULL),
        ('acct:bob', 'g2', 'u5', '2026-02-20T00:00:00Z', '2026-02-20T00:00:00Z', NULL),
        ('acct:cat', 'g3', 'u6', '2026-03-01T00:00:00Z', '2026-03-01T00:00:00Z', NULL),
        ('acct:o''hara', 'g3', 'u7', '2026-03-05T00:00:00Z', '2026-03-05T00:00:00Z', NULL)
      RETURNING id`.execute(ctx.db);
    ids = r.rows.map((x) => String(x.id));
  });
  afterAll(() => ctx.close());
  beforeEach(async () => {
    await sql`DELETE FROM tether.job`.execute(ctx.db);
  });

  const reindex = (payload: unknown, headers: Record<string, string> = admin) =>
    ctx.app.inject({ method: "POST", url: "/admin/reindex", headers, payload: payload as object });

  describe("authentication", () => {
    it("answer 401 without a bearer token or with a wrong one, on every admin route", async () => {
      for (const headers of [{}, { authorization: "Bearer wrong" }, { authorization: "Basic dGVzdDp0ZXN0" }, { authorization: "Bearer " }]) {
        for (const req of [
          { method: "POST" as const, url: "/admin/reindex", payload: { scope: "all" } },
          { method: "GET" as const, url: "/admin/queue" },
          { method: "GET" as const, url: "/admin/alerts" },
        ]) {
          const res = await ctx.app.inject({ ...req, headers });
          expect(res.statusCode, `${req.url} ${JSON.stringify(headers)}`).toBe(401);
          expect(res.json()).toMatchObject({ error: "unauthorized" });
        }
      }
      expect(await ctx.jobs()).toEqual([]);
    });

    it("answer 503 on admin routes when no admin token is configured", async () => {
      const app = await ctx.build({ adminToken: undefined });
      try {
        const res = await app.inject({ method: "GET", url: "/admin/queue", headers: admin });
        expect(res.statusCode).toBe(503);
        expect(res.json()).toMatchObject({ error: "admin_disabled" });
      } finally {
        await app.close();
      }
    });
  });

  describe("POST /admin/reindex", () => {
    it("enqueue every annotation of one user, soft-deleted ones included, at priority 100 with tag reindex", async () => {
      const res = await reindex({ scope: "user", value: "acct:ann" });
      expect(res.statusCode).toBe(200);
      expect(res.json()).toEqual({ enqueued: 3, priority: 100, tag: "reindex" });
      const jobs = await ctx.jobs();
      expect(jobs.map((j) => j.kwargs.id).sort()).toEqual(ids.slice(0, 3).sort());
      for (const j of jobs) expect(j).toMatchObject({ name: annotations.jobName, priority: 100, tag: "reindex" });
    });

    it("enqueue every annotation of one group", async () => {
      const res = await reindex({ scope: "group", value: "g2" });
      expect(res.json()).toEqual({ enqueued: 3, priority: 100, tag: "reindex" });
      expect((await ctx.jobs()).map((j) => j.kwargs.id).sort()).toEqual([ids[2], ids[3], ids[4]].sort());
    });

    it("enqueue by updated time, from inclusive and to exclusive, at priority 1000", async () => {
      const res = await reindex({ scope: "updated", from: "2026-02-01T00:00:00Z", to: "2026-03-01T00:00:00Z" });
      expect(res.json()).toEqual({ enqueued: 3, priority: 1000, tag: "reindex" });
      expect((await ctx.jobs()).map((j) => j.kwargs.id).sort()).toEqual([ids[2], ids[3], ids[4]].sort());
      await sql`DELETE FROM tether.job`.execute(ctx.db);
      expect((await reindex({ scope: "updated", from: "2026-03-01" })).json().enqueued).toBe(3);
      await sql`DELETE FROM tether.job`.execute(ctx.db);
      expect((await reindex({ scope: "updated", to: "2026-01-15T00:00:00Z" })).json().enqueued).toBe(0);
    });

    it("enqueue by created time, which differs from updated time", async () => {
      const res = await reindex({ scope: "created", from: "2026-01-01", to: "2026-02-01" });
      expect(res.json()).toEqual({ enqueued: 2, priority: 1000, tag: "reindex" });
      expect((await ctx.jobs()).map((j) => j.kwargs.id).sort()).toEqual([ids[0], ids[1]].sort());
    });

    it("enqueue a list of ids once each, including ids without a row, as strings or numbers", async () => {
      const res = await reindex({ scope: "ids", ids: [ids[0], ids[0], Number(ids[5]), "999999"] });
      expect(res.json()).toEqual({ enqueued: 3, priority: 1000, tag: "reindex" });
      expect((await ctx.jobs()).map((j) => j.kwargs.id).sort()).toEqual([ids[0], ids[5], "999999"].sort());
    });

    it("enqueue everything with scope all, with force, a custom priority and a custom tag", async () => {
      const res = await reindex({ scope: "all", force: true, priority: 500, tag: "reindex-mapping-v2" });
      expect(res.json()).toEqual({ enqueued: 7, priority: 500, tag: "reindex-mapping-v2" });
      const jobs = await ctx.jobs();
      expect(jobs).toHaveLength(7);
      for (const j of jobs) expect(j).toMatchObject({ priority: 500, tag: "reindex-mapping-v2", kwargs: { force: true } });
    });

    it("answer 404 naming the user when the user has no annotations, and enqueue nothing", async () => {
      const res = await reindex({ scope: "user", value: "acct:nobody" });
      expect(res.statusCode).toBe(404);
      expect(res.json()).toEqual({ error: "not_found", message: 'annotation with userid = "acct:nobody" not found' });
      expect((await reindex({ scope: "group", value: "g-none" })).statusCode).toBe(404);
      expect(await ctx.jobs()).toEqual([]);
    });

    it("answer 400 naming the field for an unknown scope, a missing or misplaced filter, and bad options", async () => {
      const cases: [unknown, string][] = [
        [{ scope: "planet" }, "scope"],
        [{ scope: "constructor" }, "scope"],
        [{}, "scope"],
        [{ scope: "user" }, "value"],
        [{ scope: "user", value: "acct:ann", from: "2026-01-01" }, "from"],
        [{ scope: "all", ids: ["1"] }, "ids"],
        [{ scope: "updated" }, "from"],
        [{ scope: "updated", from: "last tuesday" }, "from"],
        [{ scope: "updated", from: "2026-03-01", to: "2026-02-01" }, "to"],
        [{ scope: "ids" }, "ids"],
        [{ scope: "ids", ids: [] }, "ids"],
        [{ scope: "ids", ids: ["abc"] }, "ids.0"],
        [{ scope: "ids", ids: ["1", "0"] }, "ids.1"],
        [{ scope: "ids", ids: ["1", "2", "-5"] }, "ids.2"],
        [{ scope: "ids", ids: [0] }, "ids.0"],
        [{ scope: "all", priority: -1 }, "priority"],
        [{ scope: "all", priority: "high" }, "priority"],
        [{ scope: "all", tag: "live" }, "tag"],
        [{ scope: "all", force: "yes" }, "force"],
        [{ scope: "all", where: "1=1" }, "where"],
      ];
      for (const [payload, field] of cases) {
        const res = await reindex(payload);
        expect(res.statusCode, JSON.stringify(payload)).toBe(400);
        expect(res.json(), JSON.stringify(payload)).toMatchObject({ error: "validation", field });
      }
      expect(await ctx.jobs()).toEqual([]);
    });

    it("treat SQL injection attempts in value, ids, dates and scope as plain data", async () => {
      const before = await sql<{ n: string }>`SELECT count(*) AS n FROM annotation`.execute(ctx.db);
      // A value is compared, never spliced: these match no user.
      for (const value of ["x' OR '1'='1", "'; DROP TABLE annotation; --", "acct:ann' --"]) {
        const res = await reindex({ scope: "user", value });
        expect(res.statusCode, value).toBe(404);
      }
      // A quote inside a real user name is just a character.
      expect((await reindex({ scope: "user", value: "acct:o'hara" })).json().enqueued).toBe(1);
      expect((await reindex({ scope: "ids", ids: ["1); DROP TABLE annotation; --"] })).statusCode).toBe(400);
      expect((await reindex({ scope: "ids", ids: ["1 OR 1=1"] })).statusCode).toBe(400);
      expect((await reindex({ scope: "updated", from: "2026-01-01'; DROP TABLE annotation; --" })).statusCode).toBe(400);
      expect((await reindex({ scope: "user; DROP TABLE annotation", value: "x" })).statusCode).toBe(400);
      const after = await sql<{ n: string }>`SELECT count(*) AS n FROM annotation`.execute(ctx.db);
      expect(after.rows[0]!.n).toBe(before.rows[0]!.n);
      expect((await ctx.jobs()).map((j) => j.kwargs.id)).toEqual([ids[6]]);
    });
  });

  describe("GET /admin/queue", () => {
    beforeEach(async () => {
      await sql`DELETE FROM tether.dead_job`.execute(ctx.db);
      await sql`DELETE FROM tether.paused_name`.execute(ctx.db);
    });

    async function seedQueue(): Promise<void> {
      await sql`
        INSERT INTO tether.job (name, priority, tag, kwargs, scheduled_at, expires_at) VALUES
          ('sync_annotation', 1,    'live',    '{"id":"1"}', now() - interval '90 seconds', now() + interval '1 day'),
          ('sync_annotation', 1,    'live',    '{"id":"2"}', now() - interval '10 seconds', now() + interval '1 day'),
          ('sync_annotation', 1,    'live',    '{"id":"3"}', now() + interval '60 seconds', now() + interval '1 day'),
          ('sync_annotation', 100,  'reindex', '{"id":"4"}', now() - interval '5 seconds',  now() + interval '1 day'),
          ('sync_annotation', 1000, 'reindex', '{"id":"5"}', now() - interval '2 days',     now() - interval '1 day'),
          ('sync_widget',     1,    'live',    '{"id":"6"}', now() - interval '30 seconds', now() + interval '1 day')`.execute(ctx.db);
      await sql`
        INSERT INTO tether.dead_job (job_id, name, enqueued_at, scheduled_at, expires_at, priority, tag, kwargs, attempts, last_error, reason) VALUES
          (100, 'sync_annotation', now(), now(), now(), 1,    'live',    '{"id":"7"}', 5, 'mapper_parsing_exception', 'parked'),
          (101, 'sync_annotation', now(), now(), now(), 1,    'live',    '{"id":"8"}', 5, 'mapper_parsing_exception', 'parked'),
          (102, 'sync_widget',     now(), now(), now(), 1000, 'reindex', '{"id":"9"}', 0, NULL, 'expired')`.execute(ctx.db);
      await sql`INSERT INTO tether.paused_name (name, reason) VALUES ('sync_widget', 'es maintenance')`.execute(ctx.db);
    }

    it("count jobs by name, tag and priority, with due, future, expired, parked, the oldest due age and paused lanes", async () => {
      await seedQueue();
      const res = await ctx.app.inject({ method: "GET", url: "/admin/queue", headers: admin });
      expect(res.statusCode).toBe(200);
      const s = res.json();
      expect(s).toMatchObject({ total: 6, due: 4, future: 1, expired: 2, expiredInQueue: 1, expiredDead: 1, parked: 2 });
      expect(s.oldestDueAgeSeconds).toBeGreaterThanOrEqual(90);
      expect(s.oldestDueAgeSeconds).toBeLessThan(3600);
      expect(s.byName).toEqual([
        { name: "sync_annotation", total: 5, due: 3, future: 1, expired: 1, dead: { parked: 2, expired: 0 } },
        { name: "sync_widget", total: 1, due: 1, future: 0, expired: 0, dead: { parked: 0, expired: 1 } },
      ]);
      expect(s.byTag).toEqual([
        { tag: "live", total: 4, due: 3, future: 1, expired: 0, dead: { parked: 2, expired: 0 } },
        { tag: "reindex", total: 2, due: 1, future: 0, expired: 1, dead: { parked: 0, expired: 1 } },
      ]);
      expect(s.byPriority).toEqual([
        { priority: 1, total: 4, due: 3, future: 1, expired: 0, dead: { parked: 2, expired: 0 } },
        { priority: 100, total: 1, due: 1, future: 0, expired: 0, dead: { parked: 0, expired: 0 } },
        { priority: 1000, total: 1, due: 0, future: 0, expired: 1, dead: { parked: 0, expired: 1 } },
      ]);
      expect(s.paused).toEqual([{ name: "sync_widget", pausedAt: expect.any(String), reason: "es maintenance" }]);
    });

    it("compute the same figures against a pinned clock", async () => {
      await seedQueue();
      const db = await sql<{ now: Date }>`SELECT now() AS now`.execute(ctx.db);
      const now = new Date(db.rows[0]!.now.getTime() + 120_000);
      const s = await queueStats(ctx.db, { now });
      // Two minutes later the job scheduled 60 s ahead is due as well.
      expect(s).toMatchObject({ at: now.toISOString(), total: 6, due: 5, future: 0, expiredInQueue: 1 });
      expect(s.oldestDueAgeSeconds).toBeGreaterThanOrEqual(210);
    });

    it("report an empty queue as zeros with no oldest due age", async () => {
      const res = await ctx.app.inject({ method: "GET", url: "/admin/queue", headers: admin });
      expect(res.json()).toMatchObject({ total: 0, due: 0, future: 0, expired: 0, parked: 0, oldestDueAgeSeconds: null, byName: [], byTag: [], byPriority: [], paused: [] });
    });
  });

  describe("GET /admin/alerts", () => {
    it("return the evaluated alerts", async () => {
      const res = await ctx.app.inject({ method: "GET", url: "/admin/alerts", headers: admin });
      expect(res.statusCode).toBe(200);
      const body = res.json();
      expect(typeof body.firing).toBe("boolean");
      expect(Array.isArray(body.alerts)).toBe(true);
      expect(body.alerts.length).toBeGreaterThan(0);
      for (const a of body.alerts) expect(a).toMatchObject({ name: expect.any(String), firing: expect.any(Boolean) });
    });
  });
});
