import { sql } from "kysely";
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { ALL_IDS, checkVersionFloor, contentHash, Drainer, evaluateAlerts, insertJobs, rebuildIndex, VerifyScheduler, type ScheduledVerifyResult, type VersionFloorResult } from "@tether/core/internal";
import type { EngineSink } from "@tether/search-sink";
import { snapshotRepository, type SnapshotRepository } from "@tether/testkit";
import { createWidgetContext, widgets, type WidgetContext } from "../support/widgets.js";

/**
 * The engine goes back in time under a live Postgres: an index restored from a snapshot (older
 * documents, deleted ones back, tombstones gone, what was written since lost as by a node that
 * lost acknowledged writes), an alias moved by hand to an older index, an index deleted and made
 * again by the engine's auto-create. Each time the version floor check sees the index go back,
 * the scheduled fast verify runs at once and finds what differs, the drain repairs it, and no late
 * write resurrects a deleted entity for longer than that. Runs once per sink (test/suites.ts).
 */
describe("the index goes back in time", () => {
  let ctx: WidgetContext<EngineSink>;
  let repo: SnapshotRepository;
  let drainer: Drainer;
  let floors: VersionFloorResult[][];

  beforeAll(async () => {
    ctx = await createWidgetContext({ sink: "per-project" });
    repo = await snapshotRepository(ctx.downstreamUrl, `${ctx.indexPrefix}repo`);
  });
  afterAll(async () => {
    await repo.remove();
    await ctx.close();
  });
  beforeEach(async () => {
    await sql`TRUNCATE widget, tether.job, tether.dead_job, tether.verify_run CASCADE`.execute(ctx.db);
    await sql`DELETE FROM tether.version_floor`.execute(ctx.db);
    // Every index of the name (behind the alias, the older copies) goes; a fresh one behind the alias.
    await fetch(`${ctx.downstreamUrl}/${ctx.sink.indexName(widgets.index)}*`, { method: "DELETE" });
    await ctx.sink.provisionIndex!(widgets.index, widgets.mappings);
    floors = [];
    drainer = new Drainer({ db: ctx.db, sink: ctx.sink, collections: [widgets] });
    drainer.on("versionFloor", (r) => floors.push(r));
  });
  afterEach(async () => {
    await drainer.stop();
  });

  const enqueue = (ids: readonly string[], version?: (id: string) => number) =>
    insertJobs(ctx.db, ids.map((entityId) => ({ name: widgets.jobName, entityId, priority: 1, tag: "test", delayMs: 0, ...(version ? { version: version(entityId) } : {}) })));
  const create = async (n: number, title: string) => {
    const r = await sql<{ id: string }>`INSERT INTO widget (owner, title, version) SELECT 'w', ${title} || g, tether.next_version() FROM generate_series(1, ${n}) g RETURNING id::text AS id`.execute(ctx.db);
    const ids = r.rows.map((x) => x.id);
    await enqueue(ids);
    return ids;
  };
  const update = async (ids: readonly string[], title: string) => {
    await sql`UPDATE widget SET title = ${title}, version = tether.next_version(version) WHERE id = ANY(${ids}::bigint[])`.execute(ctx.db);
    await enqueue(ids);
  };
  const softDelete = async (ids: readonly string[]) => {
    await sql`UPDATE widget SET deleted_at = now(), version = tether.next_version(version) WHERE id = ANY(${ids}::bigint[])`.execute(ctx.db);
    await enqueue(ids);
  };
  const hardDelete = async (ids: readonly string[]) => {
    const r = await sql<{ id: string; v: string }>`DELETE FROM widget WHERE id = ANY(${ids}::bigint[]) RETURNING id::text AS id, tether.next_version(version)::text AS v`.execute(ctx.db);
    const versions = new Map(r.rows.map((x) => [x.id, Number(x.v)]));
    await enqueue(ids, (id) => versions.get(id)!);
  };
  const drain = async () => {
    // The floor check reads the highest version with a search: what the last refresh made visible.
    await ctx.sink.refreshIndex?.(widgets.index);
    const r = await drainer.drainUntilEmpty();
    expect(r.error).toBeUndefined();
    expect(await ctx.jobCount()).toBe(0);
  };
  const scheduler = () => new VerifyScheduler(ctx.db, ctx.sink, [widgets], { fastIntervalMs: 3_600_000, deepIntervalMs: 0, afterRestoreMs: 1, documentsPerSecond: 1_000_000 });
  const concrete = async () => {
    const layout = await ctx.sink.indexLayout!(widgets.index);
    expect(layout.kind).toBe("alias");
    return ctx.sink.indexName((layout as { indices: string[] }).indices[0]!);
  };
  const restoreAlert = async () => (await evaluateAlerts(ctx.db, {}, { collections: [widgets.name] })).alerts.find((a) => a.name === "restore_detected")!;

  /** What differs between Postgres and the index, entity by entity (empty: in sync, bodies included). */
  async function differences(): Promise<string[]> {
    const out: string[] = [];
    const rows = await sql<{ id: string; owner: string; title: string; body: string | null; version: string; deleted_at: Date | null }>`SELECT id::text AS id, owner, title, body, version::text AS version, deleted_at FROM widget`.execute(ctx.db);
    const states = await ctx.sink.fetchStates(widgets.index, rows.rows.map((r) => r.id));
    for (const row of rows.rows) {
      const s = states.get(row.id);
      const v = Number(row.version);
      if (row.deleted_at) {
        if (!s?.deleted || s.version < v) out.push(`${row.id}: deleted v${v}, index ${JSON.stringify(s)}`);
      } else if (!s || s.deleted || s.version !== v || s.content !== contentHash(widgets.toDocument(row as never))) out.push(`${row.id}: live v${v}, index ${JSON.stringify(s)}`);
    }
    await ctx.sink.refreshIndex?.(widgets.index);
    const known = new Set(rows.rows.map((r) => r.id));
    for (const [id, s] of await ctx.sink.listStates(widgets.index, ALL_IDS)) if (!s.deleted && !known.has(id)) out.push(`${id}: no row, index ${JSON.stringify(s)}`);
    return out;
  }

  /** The writes made after the snapshot: edits, an edit then a soft delete, hard deletes, creates. */
  async function writesAfterTheSnapshot(ids: string[]): Promise<{ resurrectable: string; editedVersion: number }> {
    await update(ids.slice(0, 10), "edited after the snapshot");
    // Edited, then soft-deleted: a late write of the edit could bring it back once its tombstone is gone.
    const resurrectable = ids[10]!;
    await update([resurrectable], "edited, then deleted");
    const editedVersion = Number((await sql<{ v: string }>`SELECT version::text AS v FROM widget WHERE id = ${resurrectable}`.execute(ctx.db)).rows[0]!.v);
    await drain();
    await softDelete(ids.slice(10, 15));
    await hardDelete(ids.slice(15, 18));
    await create(5, "created after the snapshot");
    await drain();
    expect(await differences()).toEqual([]);
    // The maintenance leader's next cycle: the floor check sees the newest writes.
    await ctx.sink.refreshIndex?.(widgets.index);
    await checkVersionFloor({ db: ctx.db, sink: ctx.sink, collections: [widgets] });
    return { resurrectable, editedVersion };
  }

  /** The floor check sees the index go back, the scheduled fast verify runs at once, the drain repairs, a second run is clean. */
  async function convergesAfter(expectedDrift: string[]): Promise<ScheduledVerifyResult> {
    floors = [];
    await drain();
    expect(floors.flat().map((f) => f.restore)).toContain("index");
    expect(await restoreAlert()).toMatchObject({ firing: true, message: expect.stringContaining("went back") });
    const [found] = await scheduler().runDue();
    expect(found).toMatchObject({ collection: widgets.name, mode: "fast", status: "done" });
    for (const kind of expectedDrift) expect(found!.drifted[kind] ?? 0, `drift ${kind}`).toBeGreaterThan(0);
    await drain();
    expect(await differences()).toEqual([]);
    const [clean] = await scheduler().runDue();
    expect(clean).toMatchObject({ status: "done", driftedTotal: 0 });
    expect((await restoreAlert()).firing).toBe(false);
    return found!;
  }

  it("an index restored from a snapshot: older documents, deleted ones back, tombstones and newer writes lost; a late write over a lost tombstone is repaired too", async () => {
    const ids = await create(30, "w");
    await drain();
    expect((await scheduler().runDue())[0]).toMatchObject({ status: "done", driftedTotal: 0 });
    const index = await concrete();
    const snap = await repo.snapshot(index);
    const { resurrectable, editedVersion } = await writesAfterTheSnapshot(ids);

    await repo.restore(snap, index);
    // A late write (a direct sync delayed in the network) of the edit made before the delete: the
    // tombstone that refused it is gone with the restore, so the engine takes it.
    const [late] = await ctx.sink.write(widgets.index, [{ kind: "index", id: resurrectable, version: editedVersion, document: { owner: "w", title: "edited, then deleted", body: null } }]);
    expect(late).toMatchObject({ status: "ok" });

    const found = await convergesAfter(["stale", "missing", "deleted_live", "ghost"]);
    expect(found.driftedTotal).toBeGreaterThanOrEqual(10 + 5 + 5 + 3);
    expect((await ctx.sink.fetchStates(widgets.index, [resurrectable])).get(resurrectable)).toMatchObject({ deleted: true });
  });

  it("an alias moved by hand to an older index", async () => {
    const ids = await create(30, "w");
    await drain();
    expect((await scheduler().runDue())[0]).toMatchObject({ status: "done", driftedTotal: 0 });
    const index = await concrete();
    const older = `${index}_older`;
    await repo.restoreAs(await repo.snapshot(index), index, older);
    await writesAfterTheSnapshot(ids);

    const alias = ctx.sink.indexName(widgets.index);
    const moved = await fetch(`${ctx.downstreamUrl}/_aliases`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ actions: [{ remove: { index, alias } }, { add: { index: older, alias } }] }),
    });
    expect(moved.status).toBe(200);
    await convergesAfter(["stale", "missing", "deleted_live"]);
  });

  it("an index deleted and made again by the engine's auto-create: said by the mapping check, mended by a rebuild", async () => {
    const ids = await create(20, "w");
    await drain();
    expect((await fetch(`${ctx.downstreamUrl}/${await concrete()}`, { method: "DELETE" })).status).toBe(200);
    // Something writes to the name: the engine creates an index there with mappings it guesses.
    const auto = await fetch(`${ctx.downstreamUrl}/${ctx.sink.indexName(widgets.index)}/_doc/${ids[0]}`, { method: "PUT", headers: { "content-type": "application/json" }, body: JSON.stringify({ title: 42 }) });
    expect(auto.status).toBe(201);
    const check = await ctx.sink.checkIndex!(widgets.index, widgets.mappings);
    expect(check).toMatchObject({ kind: "present", layout: "index" });
    expect((check as { problems: unknown[] }).problems.length).toBeGreaterThan(0);

    await rebuildIndex(ctx.db, ctx.sink, widgets);
    expect(await ctx.sink.checkIndex!(widgets.index, widgets.mappings)).toEqual({ kind: "present", layout: "alias", problems: [] });
    await drain();
    expect(await differences()).toEqual([]);
    // Tether lowered the highest version itself (a new index): not taken for the index going back.
    floors = [];
    await drain();
    expect(floors.flat().map((f) => f.restore)).not.toContain("index");
  });
});
