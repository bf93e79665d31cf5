import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { sql } from "kysely";
import { annotations } from "@tether/annotations";
import { Drainer, DrainerHeartbeat } from "@tether/core/internal";
import { asOperator, asViewer, createAdminTestApp, type AdminTestApp } from "./support/admin-test-app.js";

describe("tracing entities, verify runs, drainers and the overview", () => {
  let t: AdminTestApp;
  let drainer: Drainer;
  beforeAll(async () => {
    t = await createAdminTestApp({ drainerStaleMs: 5_000 });
    drainer = new Drainer({ db: t.db, sink: t.sink, collections: [annotations] });
  });
  afterAll(() => t.close());

  const get = async (url: string) => {
    const r = await t.app.inject({ method: "GET", url, headers: asViewer });
    expect(r.statusCode, `${url}: ${r.body}`).toBe(200);
    return r.json();
  };
  const index = () => t.sink.indexName(annotations.index);
  const rowVersion = async (id: string) => Number((await sql<{ version: string }>`SELECT version FROM annotation WHERE id = ${id}`.execute(t.db)).rows[0]!.version);
  const es = (path: string, init: RequestInit = {}) => fetch(new URL(path, t.elasticsearchUrl), { ...init, headers: { "content-type": "application/json" } });

  it("says an entity is in sync, with the same content on both sides, and shows its history", async () => {
    const id = await t.annotate({ user: "acct:trace", text: "in sync" });
    await drainer.drainOnce();
    const tr = await get(`/admin/trace/annotation/${id}`);
    expect(tr).toMatchObject({
      verdict: "in_sync",
      postgres: { exists: true, version: 1, deleted: false, row: { text: "in sync", userid: "acct:trace" } },
      downstream: { reachable: true, exists: true, version: 1, deleted: false, contentMatches: true },
      pendingJobs: [],
    });
    expect(tr.events.map((e: { kind: string }) => e.kind)).toEqual(["synced", "enqueued"]);
  });

  it("says a document deleted behind Tether's back is missing, that no job will repair it, and finds it in a verify run", async () => {
    const id = await t.annotate({ user: "acct:trace", text: "to be lost" });
    await drainer.drainOnce();
    expect((await es(`/${index()}/_doc/${id}?refresh=true`, { method: "DELETE" })).status).toBe(200);
    const tr = await get(`/admin/trace/annotation/${id}`);
    expect(tr).toMatchObject({ verdict: "missing", postgres: { version: await rowVersion(id) }, downstream: { exists: false, version: null }, pendingJobs: [] });
    expect(tr.explanation).toMatch(/no document.*No job is pending/s);

    const start = await t.app.inject({ method: "POST", url: "/admin/verify-runs", headers: asOperator, payload: { collection: "annotation" } });
    expect(start.statusCode).toBe(202);
    const run = start.json();
    expect(run).toMatchObject({ status: "running", collection: "annotation", startedBy: "ops" });
    await t.verifyRunEnded(run.id);
    const done = await get(`/admin/verify-runs/${run.id}`);
    expect(done.run).toMatchObject({ status: "done", driftedTotal: 1, drifted: { missing: 1 }, enqueued: 1, finishedAt: expect.any(String) });
    expect(done.results).toEqual([{ kind: "missing", entityId: id }]);
    expect((await get("/admin/verify-runs")).items[0]).toMatchObject({ id: run.id, status: "done" });

    const after = await get(`/admin/trace/annotation/${id}`);
    expect(after.pendingJobs).toEqual([expect.objectContaining({ tag: "verify", state: "due" })]);
    expect(after.explanation).toMatch(/1 job\(s\) pending/);
    // Elasticsearch keeps a delete marker above the row's version: the first repair is refused
    // and the drainer leapfrogs the row's version; the trace shows the retry and why.
    await drainer.drainOnce();
    const retried = await get(`/admin/trace/annotation/${id}`);
    expect(retried.pendingJobs).toEqual([expect.objectContaining({ attempts: 1, lastError: expect.stringMatching(/not confirmed on read-back/) })]);
  });

  it("says when the document holds the row's version but other content, and when it is a stale version", async () => {
    const id = await t.annotate({ user: "acct:trace", text: "original" });
    await drainer.drainOnce();
    const v = await rowVersion(id);
    const src = (await (await es(`/${index()}/_doc/${id}`)).json()) as { _source: Record<string, unknown> };
    // Same version (external_gte accepts an equal one), other text: an edit nothing recorded.
    const put = await es(`/${index()}/_doc/${id}?version=${v}&version_type=external_gte&refresh=true`, { method: "PUT", body: JSON.stringify({ ...src._source, text: "edited behind our back" }) });
    expect(put.status).toBe(200);
    expect(await get(`/admin/trace/annotation/${id}`)).toMatchObject({ verdict: "content_differs", downstream: { version: v, contentMatches: false } });

    await sql`UPDATE annotation SET version = ${v + 4} WHERE id = ${id}`.execute(t.db);
    expect(await get(`/admin/trace/annotation/${id}`)).toMatchObject({ verdict: "stale", postgres: { version: v + 4 }, downstream: { version: v } });
    const bad = await t.app.inject({ method: "GET", url: "/admin/trace/annotation/not-a-number", headers: asViewer });
    expect(bad.statusCode).toBe(400);
    expect(bad.json()).toMatchObject({ field: "id" });
    expect((await get("/admin/trace/annotation/987654")).verdict).toBe("absent");
  });

  it("lists drainers by their heartbeats: alive, cleanly stopped, and gone when silent", async () => {
    const alive = new DrainerHeartbeat({ db: t.db, version: "9.9.9", host: "drainer-a", intervalMs: 60_000 });
    const stopped = new DrainerHeartbeat({ db: t.db, version: "9.9.9", host: "drainer-b", intervalMs: 60_000 });
    const lost = new DrainerHeartbeat({ db: t.db, version: "9.9.8", host: "drainer-c", intervalMs: 60_000 });
    await Promise.all([alive.start(), stopped.start(), lost.start()]);
    alive.recordPass({ claimed: 3, repaired: 1, durationMs: 12 } as never);
    alive.recordPass({ error: "postgres unreachable" });
    await alive.beat();
    await stopped.stop();
    // A SIGKILLed drainer just stops writing: its row ages.
    await lost.stop();
    await sql`UPDATE tether.drainer_heartbeat SET stopped_at = NULL, seen_at = now() - interval '1 minute' WHERE id = ${lost.id}`.execute(t.db);
    const { items } = await get("/admin/drainers");
    const by = (host: string) => items.find((d: { host: string }) => d.host === host);
    expect(by("drainer-a")).toMatchObject({ state: "alive", version: "9.9.9", passes: 2, failedPasses: 1, pid: process.pid, lastPass: { error: "postgres unreachable" } });
    expect(by("drainer-b")).toMatchObject({ state: "stopped" });
    expect(by("drainer-c")).toMatchObject({ state: "gone" });
    expect((await get("/admin/overview")).drainers).toEqual({ alive: 1, gone: 2 });
    await alive.stop();
  });

  it("gives an overview with per-lane counts, completion buckets, the queue-length series and alerts with what to check", async () => {
    await t.annotate({ user: "acct:ov" }, { directSync: false });
    await sql`INSERT INTO tether.queue_sample (live_length, total_length, expired, parked, oldest_due_age_seconds) VALUES (4, 6, 0, 0, 0)`.execute(t.db);
    const o = await get("/admin/overview");
    const lane = o.lanes.find((l: { name: string }) => l.name === "sync_annotation");
    expect(lane).toMatchObject({ collection: "annotation", paused: null });
    expect(lane.groups).toContainEqual(expect.objectContaining({ tag: "live", priority: 1, total: 1, due: 1 }));
    expect(lane.total).toBe(lane.groups.reduce((n: number, g: { total: number }) => n + g.total, 0));
    expect(o.completion.bucketSeconds).toBe(60);
    expect(o.completion.buckets.reduce((n: number, b: { confirmed: number }) => n + b.confirmed, 0)).toBe(3); // one confirmed job in each of the first three tests
    expect(o.queueLength.at(-1)).toMatchObject({ liveLength: 4, totalLength: 6 });
    expect(o.alerts.alerts).toHaveLength(8);
    for (const a of o.alerts.alerts) expect(a.check.length).toBeGreaterThan(0);
  });

  /** Drain passes until one claims nothing (jobs of earlier tests in backoff are not due). */
  const drainDue = async () => {
    let forced = 0;
    for (let r = await drainer.drainOnce(); r.claimed > 0; r = await drainer.drainOnce()) forced += r.forced;
    return { forced };
  };

  it("repairs content drift at the row's own version with the trace's forced re-index, and then says in_sync", async () => {
    const id = await t.annotate({ user: "acct:trace", text: "the row's text" });
    await drainer.drainOnce();
    const src = (await (await es(`/${index()}/_doc/${id}`)).json()) as { _version: number; _source: Record<string, unknown> };
    // The edit keeps the document at the row's own version (from the global sequence, not 1).
    const rowVersion = Number((await sql<{ version: string }>`SELECT version FROM annotation WHERE id = ${id}`.execute(t.db)).rows[0]!.version);
    expect(src._version).toBe(rowVersion);
    const put = await es(`/${index()}/_doc/${id}?version=${rowVersion}&version_type=external_gte&refresh=true`, { method: "PUT", body: JSON.stringify({ ...src._source, text: "edited behind our back" }) });
    expect(put.status).toBe(200);
    const drifted = await get(`/admin/trace/annotation/${id}`);
    expect(drifted).toMatchObject({ verdict: "content_differs", repair: { force: true } });
    expect(drifted.explanation).toMatch(/Only a forced re-index rewrites it/);

    // Why the repair is forced: a job that is not finds the versions equal and confirms the document as it is.
    const reindex = (body: object) => t.app.inject({ method: "POST", url: "/admin/reindex", headers: asOperator, payload: { collection: "annotation", scope: "ids", ids: [id], priority: 1, ...body } });
    expect((await reindex({})).json()).toMatchObject({ enqueued: 1 });
    await drainDue();
    expect((await get(`/admin/trace/annotation/${id}`)).verdict).toBe("content_differs");

    expect((await reindex({ force: drifted.repair.force })).json()).toMatchObject({ enqueued: 1 });
    expect((await drainDue()).forced).toBe(1);
    expect(await get(`/admin/trace/annotation/${id}`)).toMatchObject({ verdict: "in_sync", repair: null, downstream: { version: rowVersion, contentMatches: true }, pendingJobs: [] });
  });

  it("offers a plain re-index for the other drifts and none when in sync", async () => {
    const id = await t.annotate({ user: "acct:trace", text: "soon missing" });
    await drainer.drainOnce();
    expect((await get(`/admin/trace/annotation/${id}`)).repair).toBeNull();
    expect((await es(`/${index()}/_doc/${id}?refresh=true`, { method: "DELETE" })).status).toBe(200);
    expect(await get(`/admin/trace/annotation/${id}`)).toMatchObject({ verdict: "missing", repair: { force: false } });
  });
});
