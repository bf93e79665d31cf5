import { sql } from "kysely";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { captureStatus, createWriter, defineCollection, disableCapture, Drainer, enableCapture, nextVersion } from "@tether/core";
import { createWidgetContext, widgets, type WidgetContext, type WidgetRow } from "../support/widgets.js";

/** A clock past every captured job's grace period (60 s by default). */
const later = () => new Date(Date.now() + 3_600_000);

describe("the capture trigger", () => {
  let ctx: WidgetContext;
  let drainer: Drainer;

  beforeAll(async () => {
    ctx = await createWidgetContext();
    drainer = new Drainer({ db: ctx.db, sink: ctx.sink, collections: [widgets] });
  });
  afterAll(() => ctx.close());
  beforeEach(async () => {
    await disableCapture(ctx.db, widgets);
    await sql`TRUNCATE widget, tether.job`.execute(ctx.db);
    await enableCapture(ctx.db, widgets);
  });

  const version = async (id: string) => Number((await sql<{ version: string }>`SELECT version FROM widget WHERE id = ${id}`.execute(ctx.db)).rows[0]!.version);
  /** The last version the sequence handed out: a change that takes one version takes this + 1. */
  const lastHandedOut = async () => Number((await sql<{ v: string }>`SELECT last_value::text AS v FROM tether.version_seq`.execute(ctx.db)).rows[0]!.v);
  const jobs = async () =>
    (await sql<{ tag: string; priority: number; id: string; version: string | null; due_in: number }>`
      SELECT tag, priority, kwargs->>'id' AS id, kwargs->>'version' AS version,
             extract(epoch FROM scheduled_at - now()) AS due_in
      FROM tether.job ORDER BY id`.execute(ctx.db)).rows;
  const drainAll = async () => {
    const now = later();
    const total = { claimed: 0, repaired: 0, up_to_date: 0, deleted_downstream: 0 };
    for (;;) {
      const r = await drainer.drainOnce({ now });
      expect(r.error).toBeUndefined();
      for (const k of Object.keys(total) as (keyof typeof total)[]) total[k] += r[k];
      if (r.claimed === 0) return total;
    }
  };

  it("enqueues one capture job per row of a plain INSERT, with the writer's priority and grace", async () => {
    const ids = await ctx.insertRaw(3);
    const js = await jobs();
    expect(js.map((j) => j.id)).toEqual(ids);
    expect(js.every((j) => j.tag === "capture" && j.priority === 1 && j.version === null)).toBe(true);
    expect(js.every((j) => j.due_in > 50 && j.due_in <= 60)).toBe(true);
  });

  it("brings an UPDATE from plain SQL to Elasticsearch through the drainer", async () => {
    const [id] = await ctx.insertRaw(1);
    await drainAll();
    const before = await version(id!);
    await sql`UPDATE widget SET title = 'edited by psql' WHERE id = ${id}`.execute(ctx.db);
    const after = await version(id!);
    expect(after).toBeGreaterThan(before);
    expect((await jobs()).map((j) => [j.id, j.tag])).toEqual([[id, "capture"]]);
    const drained = await drainAll();
    expect(drained.repaired).toBe(1);
    const states = await ctx.sink.fetchStates(widgets.index, [id!]);
    expect(states.get(id!)).toMatchObject({ version: after, deleted: false });
    const doc = await fetch(new URL(`/${ctx.indexPrefix}${widgets.index}/_doc/${id}`, ctx.elasticsearchUrl)).then((r) => r.json() as Promise<{ _source: { title: string } }>);
    expect(doc._source.title).toBe("edited by psql");
  });

  it("never resurrects a row deleted with plain SQL, soft or hard", async () => {
    const [soft, hard] = await ctx.insertRaw(2);
    await drainAll();
    const late = async (id: string) =>
      (await ctx.sink.write(widgets.index, [{ kind: "index", id, version: 1, document: { owner: "raw", title: "late", body: null } }]))[0]!;
    const hardBefore = await version(hard!);
    await sql`UPDATE widget SET deleted_at = now() WHERE id = ${soft}`.execute(ctx.db);
    const softVersion = await version(soft!);
    await sql`DELETE FROM widget WHERE id = ${hard}`.execute(ctx.db);
    const js = await jobs();
    const tombstone = Number(js.find((j) => j.id === hard)?.version);
    expect(tombstone).toBeGreaterThan(hardBefore);
    const drained = await drainAll();
    expect(drained.deleted_downstream).toBe(2);
    const states = await ctx.sink.fetchStates(widgets.index, [soft!, hard!]);
    expect(states.get(soft!)).toEqual({ version: softVersion, deleted: true });
    // The hard delete leaves a tombstone at the job's version too (kept until the retention purge).
    expect(states.get(hard!)).toEqual({ version: tombstone, deleted: true });
    // A late write of the old version (a delayed direct sync) is refused, not resurrected.
    expect((await late(soft!)).status).toBe("conflict");
    expect((await late(hard!)).status).toBe("conflict");
    expect((await ctx.sink.fetchStates(widgets.index, [soft!])).get(soft!)).toEqual({ version: softVersion, deleted: true });
  });

  it("gives a statement that sets the version itself exactly one new version from the sequence, never its own nor a lowered one", async () => {
    const [id] = await ctx.insertRaw(1);
    let before = await lastHandedOut();
    await sql`UPDATE widget SET title = 'x', version = version + 1 WHERE id = ${id}`.execute(ctx.db);
    expect(await version(id!)).toBe(before + 1);
    before = await lastHandedOut();
    await sql`UPDATE widget SET title = 'y', version = 1 WHERE id = ${id}`.execute(ctx.db);
    expect(await version(id!)).toBe(before + 1);
    // An UPDATE that changes nothing is not a change.
    await sql`UPDATE widget SET title = title WHERE id = ${id}`.execute(ctx.db);
    expect(await version(id!)).toBe(before + 1);
    expect((await jobs()).length).toBe(3);
  });

  it("gives exactly one bump and one job per change, whether it came through the writer or not", async () => {
    const writer = createWriter({});
    const jobsOf = async (id: string) => (await jobs()).filter((j) => j.id === id).map((j) => j.tag);
    // Each change takes exactly the versions it should from the sequence: one, or two for two changes.
    let before = await lastHandedOut();
    const created = await writer.createWithJob(ctx.db, widgets, { owner: "w", title: "by the writer" });
    const id = created.changes[0]!.id;
    expect(await version(id)).toBe(before + 1);
    expect(await jobsOf(id)).toEqual(["live"]);
    await writer.updateWithJob(ctx.db, widgets, id, { title: "edited by the writer" });
    expect(await version(id)).toBe(before + 2);
    expect(await jobsOf(id)).toEqual(["live", "live"]);
    await sql`UPDATE widget SET title = 'edited by psql' WHERE id = ${id}`.execute(ctx.db);
    expect(await version(id)).toBe(before + 3);
    expect(await jobsOf(id)).toEqual(["live", "live", "capture"]);
    // In the caller's transaction: the writer's statement is the writer's, a plain one after it is captured.
    await ctx.db.transaction().execute(async (trx) => {
      await writer.updateWithJob(trx, widgets, id, { title: "writer, caller's transaction" });
      await sql`UPDATE widget SET body = 'plain, same transaction' WHERE id = ${id}`.execute(trx);
    });
    expect(await version(id)).toBe(before + 5);
    expect(await jobsOf(id)).toEqual(["live", "live", "capture", "live", "capture"]);
    // writeWithJobs: the function's statements bump themselves (nextVersion), the writer enqueues once.
    before = await lastHandedOut();
    await writer.writeWithJobs(ctx.db, widgets, async (trx) => {
      const rows = await trx.updateTable("widget").set({ title: "own statement", version: nextVersion("version") }).where("id", "=", id).returningAll().execute();
      return rows.map((row) => ({ id: String(row.id), row: row as never }));
    });
    expect(await version(id)).toBe(before + 1);
    await writer.deleteWithJob(ctx.db, widgets, id);
    expect(await version(id)).toBe(before + 2);
    expect(await jobsOf(id)).toEqual(["live", "live", "capture", "live", "capture", "live", "live"]);
  });

  it("gives a hard delete through the writer one job carrying its tombstone's version, and captures a plain DELETE after it in the same transaction", async () => {
    const writer = createWriter({});
    // One after another: the ids ascend in this order, as the expectation below sorts them.
    const ids: string[] = [];
    for (const title of ["a", "b", "c"]) ids.push((await writer.createWithJob(ctx.db, widgets, { owner: "w", title })).changes[0]!.id);
    const [a, b, c] = ids;
    await writer.updateWithJob(ctx.db, widgets, a!, { title: "a, edited" });
    const last = await version(c!);
    const gone = await writer.deleteWithJob(ctx.db, widgets, a!, { hard: true });
    // A tombstone takes a version above every version handed out before it (c's is the last).
    expect(gone.changes).toEqual([{ id: a, deletedVersion: expect.any(Number) }]);
    expect(gone.changes[0]!.deletedVersion).toBeGreaterThan(Math.max(await version(b!), last) + 1);
    await ctx.db.transaction().execute(async (trx) => {
      await writer.deleteWithJob(trx, widgets, b!, { hard: true });
      await sql`DELETE FROM widget WHERE id = ${c}`.execute(trx);
    });
    const deletes = (await jobs()).filter((j) => j.version !== null).map((j) => ({ id: j.id, tag: j.tag, version: Number(j.version) }));
    expect(deletes.sort((x, y) => Number(x.id) - Number(y.id))).toEqual([
      { id: a, tag: "live", version: gone.changes[0]!.deletedVersion },
      { id: b, tag: "live", version: gone.changes[0]!.deletedVersion! + 1 },
      { id: c, tag: "capture", version: gone.changes[0]!.deletedVersion! + 2 },
    ]);
  });

  it("counts an UPDATE only when a column the document uses changed, when the collection declares them", async () => {
    const declared = defineCollection<WidgetRow>({ ...widgetsOptions(), captureColumns: ["owner", "title"] });
    await disableCapture(ctx.db, widgets);
    await enableCapture(ctx.db, declared);
    try {
      const [id] = await ctx.insertRaw(1);
      const born = await version(id!);
      await sql`UPDATE widget SET body = 'not in the document', updated_at = now() WHERE id = ${id}`.execute(ctx.db);
      expect(await version(id!)).toBe(born);
      expect((await jobs()).length).toBe(1);
      await sql`UPDATE widget SET title = 'in the document' WHERE id = ${id}`.execute(ctx.db);
      await sql`UPDATE widget SET deleted_at = now() WHERE id = ${id}`.execute(ctx.db);
      expect(await version(id!)).toBe(born + 2);
      expect((await jobs()).length).toBe(3);
    } finally {
      await disableCapture(ctx.db, declared);
    }
  });

  it("captures a changed primary key as a delete of the old id and a new entity", async () => {
    const [id] = await ctx.insertRaw(1);
    await sql`TRUNCATE tether.job`.execute(ctx.db);
    await sql`ALTER TABLE widget ALTER COLUMN id SET GENERATED BY DEFAULT`.execute(ctx.db);
    const before = await lastHandedOut();
    await sql`UPDATE widget SET id = id + 1000 WHERE id = ${id}`.execute(ctx.db);
    // The new id takes a fresh version; the old id's tombstone the one after it.
    expect(await version(String(Number(id) + 1000))).toBe(before + 1);
    const js = await jobs();
    expect(js.map((j) => [j.id, j.version]).sort()).toEqual([[id, String(before + 2)], [String(Number(id) + 1000), null]].sort());
  });

  it("plans the job inserts without JIT, which would compile for transition tables' unknown size on every bulk statement", async () => {
    const r = await sql<{ proname: string; proconfig: string[] | null }>`
      SELECT p.proname, p.proconfig FROM pg_proc p JOIN pg_namespace s ON s.oid = p.pronamespace
      WHERE s.nspname = 'tether' AND p.proname LIKE 'tether_capture_widget%' ORDER BY p.proname`.execute(ctx.db);
    expect(r.rows.map((x) => [x.proname, x.proconfig])).toEqual([
      ["tether_capture_widget_bump", null],
      ["tether_capture_widget_del", ["jit=off"]],
      ["tether_capture_widget_ins", ["jit=off"]],
      ["tether_capture_widget_upd", ["jit=off"]],
    ]);
  });

  it("disabling leaves no trigger and no function behind, and plain writes enqueue nothing", async () => {
    expect((await captureStatus(ctx.db, widgets)).enabled).toBe(true);
    await disableCapture(ctx.db, widgets);
    const status = await captureStatus(ctx.db, widgets);
    expect(status).toEqual({ enabled: false, triggers: [], functions: [], embeds: [] });
    const leftovers = await sql<{ n: string }>`
      SELECT (SELECT count(*) FROM pg_trigger WHERE tgrelid = 'widget'::regclass AND NOT tgisinternal)
           + (SELECT count(*) FROM pg_proc p JOIN pg_namespace s ON s.oid = p.pronamespace WHERE s.nspname = 'tether' AND p.proname LIKE 'tether_capture%') AS n`.execute(ctx.db);
    expect(Number(leftovers.rows[0]!.n)).toBe(0);
    const [id] = await ctx.insertRaw(1);
    await sql`UPDATE widget SET title = 'untracked' WHERE id = ${id}`.execute(ctx.db);
    expect(await ctx.jobCount()).toBe(0);
    expect(await version(id!)).toBe(1);
  });

  it("refuses a table without the version column with an error that says to adopt it", async () => {
    const bare = defineCollection({ ...widgetsOptions(), versionColumn: "revision" });
    await expect(enableCapture(ctx.db, bare)).rejects.toThrow(/no column "revision".*tether adopt widget/);
  });
});

function widgetsOptions() {
  return {
    name: widgets.name,
    table: widgets.table,
    index: widgets.index,
    deletedColumn: "deleted_at",
    toDocument: widgets.toDocument,
  };
}
