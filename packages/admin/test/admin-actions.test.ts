import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { sql } from "kysely";
import { annotations } from "@tether/annotations";
import { Drainer } from "@tether/core";
import { asOperator, asViewer, createAdminTestApp, OPERATOR, type AdminTestApp } from "./support/admin-test-app.js";

describe("steering the queue through the admin API", () => {
  let t: AdminTestApp;
  beforeAll(async () => {
    t = await createAdminTestApp();
  });
  afterAll(() => t.close());
  beforeEach(async () => {
    await sql`DELETE FROM tether.job`.execute(t.db);
    await sql`DELETE FROM tether.dead_job`.execute(t.db);
    await sql`DELETE FROM tether.paused_name`.execute(t.db);
  });

  const get = (url: string, headers = asViewer) => t.app.inject({ method: "GET", url, headers }).then((r) => {
    expect(r.statusCode, `${url}: ${r.body}`).toBe(200);
    return r.json();
  });
  const post = async (url: string, payload: object, headers = asOperator) => {
    const r = await t.app.inject({ method: "POST", url, headers, payload });
    expect(r.statusCode, `${url}: ${r.body}`).toBeLessThan(300);
    return r.json();
  };

  it("pauses a lane with a reason, shows it, resumes it, and audits both with who and why", async () => {
    expect(await post("/admin/lanes/sync_annotation/pause", { reason: "Elasticsearch upgrade" })).toEqual({ name: "sync_annotation", paused: true, changed: true });
    const lanes = await get("/admin/lanes");
    expect(lanes.items.find((l: { name: string }) => l.name === "sync_annotation")).toMatchObject({ collection: "annotation", paused: { reason: "Elasticsearch upgrade" } });
    expect(await post("/admin/lanes/sync_annotation/resume", {})).toEqual({ name: "sync_annotation", paused: false, changed: true });
    const audit = await get("/admin/audit?limit=2");
    expect(audit.items.map((a: { action: string }) => a.action)).toEqual(["lane.resume", "lane.pause"]);
    expect(audit.items[1]).toMatchObject({ actor: OPERATOR.name, role: "operator", status: 200, params: { name: "sync_annotation", reason: "Elasticsearch upgrade" }, result: { paused: true } });
    const missing = await t.app.inject({ method: "POST", url: "/admin/lanes/sync_annotation/pause", headers: asOperator, payload: {} });
    expect(missing.statusCode).toBe(400);
    expect(missing.json()).toMatchObject({ error: "validation", field: "reason" });
  });

  it("takes a collection name for a lane, resolved to its lane (the answer names the lane), as the API docs say", async () => {
    expect(await post("/admin/lanes/annotation/pause", { reason: "by collection" })).toEqual({ name: "sync_annotation", paused: true, changed: true });
    expect(await post("/admin/lanes/annotation/resume", {})).toEqual({ name: "sync_annotation", paused: false, changed: true });
    const openapi = (await t.app.inject({ method: "GET", url: "/admin/openapi.json", headers: asViewer })).json() as { paths: Record<string, { post: { parameters: { name: string; description?: string }[] } }> };
    const param = openapi.paths["/admin/lanes/{name}/pause"]!.post.parameters.find((p) => p.name === "name");
    expect(param?.description).toMatch(/a collection name resolves to its lane/);
  });

  it("lists queued jobs filtered and cursor-paginated, cancels selected ones and reprioritizes by filter", async () => {
    const ids: string[] = [];
    for (let i = 0; i < 5; i++) ids.push(await t.annotate({ user: `acct:page${i % 2}` }, { directSync: false }));
    await post("/admin/reindex", { scope: "user", value: "acct:page0" });
    const first = await get("/admin/jobs?limit=3");
    expect(first.items).toHaveLength(3);
    expect(first.nextCursor).toBe(first.items[2].id);
    const second = await get(`/admin/jobs?limit=3&cursor=${first.nextCursor}`);
    expect(second.items).toHaveLength(3);
    const third = await get(`/admin/jobs?limit=3&cursor=${second.nextCursor}`);
    expect(third).toEqual({ items: [expect.objectContaining({ tag: "reindex" }), expect.objectContaining({ tag: "reindex" })], nextCursor: null });
    const all = [...first.items, ...second.items, ...third.items];
    expect(new Set(all.map((j: { id: string }) => j.id)).size).toBe(8);

    const reindex = await get("/admin/jobs?tag=reindex");
    expect(reindex.items).toHaveLength(3);
    for (const j of reindex.items) expect(j).toMatchObject({ name: "sync_annotation", priority: 100, state: "due", attempts: 0 });
    const one = await get(`/admin/jobs?entityId=${ids[1]}`);
    expect(one.items.map((j: { entityId: string }) => j.entityId)).toEqual([ids[1]]);

    expect(await post("/admin/jobs/reprioritize", { all: true, filter: { tag: "reindex" }, priority: 7 })).toEqual({ updated: 3 });
    expect((await get("/admin/jobs?priority=7")).items).toHaveLength(3);
    expect(await post("/admin/jobs/cancel", { ids: [one.items[0].id] })).toEqual({ cancelled: 1 });
    expect(await t.jobCount()).toBe(7);
    const bad = await t.app.inject({ method: "POST", url: "/admin/jobs/cancel", headers: asOperator, payload: { ids: ["1"], all: true } });
    expect(bad.statusCode).toBe(400);
    const unknown = await t.app.inject({ method: "GET", url: "/admin/jobs?colour=red", headers: asViewer });
    expect(unknown.statusCode).toBe(400);
    expect(unknown.json()).toMatchObject({ field: "colour" });
    expect(await t.jobCount()).toBe(7);
  });

  it("lists parked jobs with their reason and last error, retries selected ones back into the queue and discards the rest", async () => {
    const a = await t.annotate({ user: "acct:dead" }, { directSync: false });
    const b = await t.annotate({ user: "acct:dead" }, { directSync: false });
    // A drainer that handles no collection parks every job: a real parked job, with its reason.
    const blind = new Drainer({ db: t.db, sink: t.sink, collections: [] });
    expect((await blind.drainOnce()).parked).toBe(2);
    const dead = await get("/admin/dead-jobs?reason=parked");
    expect(dead.items).toHaveLength(2);
    expect(dead.items[0]).toMatchObject({ reason: "parked", name: "sync_annotation", lastError: expect.stringContaining("unknown job name") });
    const target = dead.items.find((d: { entityId: string }) => d.entityId === a);
    expect(await post("/admin/dead-jobs/retry", { ids: [target.id] })).toEqual({ retried: 1 });
    const queued = await get("/admin/jobs");
    expect(queued.items.map((j: { entityId: string }) => j.entityId)).toEqual([a]);
    const drained = await new Drainer({ db: t.db, sink: t.sink, collections: [annotations] }).drainOnce();
    expect(drained.up_to_date + drained.repaired).toBe(1);
    expect(await post("/admin/dead-jobs/discard", { all: true, filter: { reason: "parked" } })).toEqual({ discarded: 1 });
    expect((await get("/admin/dead-jobs")).items).toEqual([]);
    const trace = await get(`/admin/trace/annotation/${b}`);
    expect(trace.events.map((e: { kind: string }) => e.kind)).toEqual(["discarded", "parked", "enqueued"]);
  });

  it("re-indexes by user and answers how many jobs it enqueued, keeping the documented /admin/reindex contract", async () => {
    for (let i = 0; i < 3; i++) await t.annotate({ user: "acct:ri" }, { directSync: false });
    await sql`DELETE FROM tether.job`.execute(t.db);
    expect(await post("/admin/reindex", { scope: "user", value: "acct:ri", force: true })).toEqual({ enqueued: 3, priority: 100, tag: "reindex" });
    expect(await post("/admin/reindex", { collection: "annotation", scope: "ids", ids: ["1", 2] })).toMatchObject({ enqueued: 2, priority: 1000 });
    const nobody = await t.app.inject({ method: "POST", url: "/admin/reindex", headers: asOperator, payload: { scope: "user", value: "acct:nobody" } });
    expect(nobody.statusCode).toBe(404);
    const wrong = await t.app.inject({ method: "POST", url: "/admin/reindex", headers: asOperator, payload: { collection: "widget", scope: "all" } });
    expect(wrong.json()).toMatchObject({ error: "validation", field: "collection" });
    const audit = await get("/admin/audit?action=reindex");
    expect(audit.items.slice(0, 4).map((x: { status: number }) => x.status)).toEqual([400, 404, 200, 200]);
    expect(audit.items[3]).toMatchObject({ params: { scope: "user", value: "acct:ri", force: true }, result: { enqueued: 3 } });
  });
});
