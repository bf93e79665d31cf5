import { sql } from "kysely";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createWriter, Drainer, enqueueReindex, listEntityEvents, retryDeadJobs, runMaintenance } from "@tether/core/internal";
import { createWidgetContext, widgets, type WidgetContext } from "../support/widgets.js";

describe("the per-entity event log behind the console's trace", () => {
  let ctx: WidgetContext;
  beforeAll(async () => {
    ctx = await createWidgetContext();
  });
  afterAll(() => ctx.close());

  it("shows a pending job as its enqueue, then its sync from the drain pass's batch row, and leaves out a re-index that found the document current", async () => {
    const writer = createWriter({ sink: ctx.sink, graceMs: 0 });
    const { row } = await writer.createWithJob(ctx.db, widgets, { owner: "ev", title: "one" });
    expect((await listEntityEvents(ctx.db, widgets.jobName, String(row!.id), 10)).map((e) => e.kind)).toEqual(["enqueued"]);
    await new Drainer({ db: ctx.db, sink: ctx.sink, collections: [widgets] }).drainOnce();
    const events = await listEntityEvents(ctx.db, widgets.jobName, String(row!.id), 10);
    expect(events.map((e) => [e.kind, e.tag])).toEqual([["synced", "live"], ["enqueued", "live"]]);
    expect(events[1]!.jobId).toBe(events[0]!.jobId);
    // Bulk re-index work that found the document current leaves no trace of its own.
    expect((await enqueueReindex(ctx.db, widgets, { scope: "all" })).enqueued).toBeGreaterThan(0);
    await new Drainer({ db: ctx.db, sink: ctx.sink, collections: [widgets] }).drainUntilEmpty();
    expect(await listEntityEvents(ctx.db, widgets.jobName, String(row!.id), 10)).toEqual(events);
  });

  it("tells a retried job's story: enqueued, parked with its reason, retried from the dead-letter table when the operator did it, written by the drainer, each once", async () => {
    const writer = createWriter({ graceMs: 0 });
    const { row } = await writer.createWithJob(ctx.db, widgets, { owner: "ev", title: "parked once" });
    const id = String(row!.id);
    // A drainer that handles no collection parks the job for real.
    expect((await new Drainer({ db: ctx.db, sink: ctx.sink, collections: [] }).drainOnce()).parked).toBe(1);
    const { retried } = await retryDeadJobs(ctx.db, { name: widgets.jobName, all: true });
    expect(retried).toBe(1);
    const story = (events: { kind: string; detail: string | null }[]) => events.map((e) => [e.kind, e.detail?.match(/retried from the dead-letter table|unknown job name/)?.[0] ?? null]);
    const pending = await listEntityEvents(ctx.db, widgets.jobName, id, 10);
    expect(story(pending)).toEqual([["enqueued", "retried from the dead-letter table"], ["parked", "unknown job name"], ["enqueued", null]]);
    // The retry is told at the moment it happened, after the parking (the job keeps its first enqueued_at).
    expect(Date.parse(pending[0]!.at)).toBeGreaterThanOrEqual(Date.parse(pending[1]!.at));
    await new Drainer({ db: ctx.db, sink: ctx.sink, collections: [widgets] }).drainOnce();
    const drained = await listEntityEvents(ctx.db, widgets.jobName, id, 10);
    expect(story(drained)).toEqual([["repaired", null], ["enqueued", "retried from the dead-letter table"], ["parked", "unknown job name"], ["enqueued", null]]);
    expect(drained[0]!.jobId).toBe(pending[0]!.jobId);
  });

  it("is pruned by maintenance by age and to the newest events of each recently active entity", async () => {
    await sql`DELETE FROM tether.entity_event`.execute(ctx.db);
    await sql`INSERT INTO tether.entity_event (name, entity_id, kind, at)
              SELECT 'sync_widget', '7', 'enqueued', now() - (131 - g) * interval '1 second' FROM generate_series(1, 130) g`.execute(ctx.db);
    await sql`INSERT INTO tether.entity_event (name, entity_id, kind, at)
              SELECT 'sync_widget', '8', 'synced', now() - interval '5 days' FROM generate_series(1, 3)`.execute(ctx.db);
    await sql`INSERT INTO tether.entity_event (name, entity_id, kind) VALUES ('sync_widget', '9', 'synced')`.execute(ctx.db);
    // A drain pass's batch row goes by age as a whole.
    await sql`DELETE FROM tether.entity_event_batch`.execute(ctx.db);
    await sql`INSERT INTO tether.entity_event_batch (at, name, entity_ids, job_ids, kinds, tags, priorities, enqueued_at)
              VALUES (now() - interval '5 days', 'sync_widget', '{8}', '{1}', '{synced}', '{live}', '{1}', ARRAY[now() - interval '5 days']),
                     (now(), 'sync_widget', '{9}', '{2}', '{synced}', '{live}', '{1}', ARRAY[now()])`.execute(ctx.db);
    const r = await runMaintenance(ctx.db, { sampleIntervalMs: 0, eventsPerEntity: 100, eventRetentionMs: 86_400_000 });
    expect(r.prunedEvents).toBe(34);
    expect((await listEntityEvents(ctx.db, "sync_widget", "8", 10)).map((e) => e.kind)).toEqual([]);
    expect((await listEntityEvents(ctx.db, "sync_widget", "9", 10)).map((e) => e.kind)).toEqual(["synced", "enqueued", "synced"]);
    const left = await sql<{ entity_id: string; n: string }>`SELECT entity_id, count(*) AS n FROM tether.entity_event GROUP BY 1 ORDER BY 1`.execute(ctx.db);
    expect(left.rows.map((x) => [x.entity_id, Number(x.n)])).toEqual([["7", 100], ["9", 1]]);
    // The 30 oldest went (ages 101..130 s); the newest 100 (ages 1..100 s) stay.
    const old = await sql<{ n: string }>`SELECT count(*) AS n FROM tether.entity_event WHERE entity_id = '7' AND at < now() - interval '100.5 seconds'`.execute(ctx.db);
    expect(Number(old.rows[0]!.n)).toBe(0);
  });
});
