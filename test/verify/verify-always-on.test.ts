import { once } from "node:events";
import pino from "pino";
import { sql } from "kysely";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startScheduledRun, type AlertsReport, type Collection, type ScheduledVerifyResult } from "@tether/core/internal";
import type { EngineSink } from "@tether/search-sink";
import { waitFor, type TestContext } from "@tether/testkit";
import { startDrainerDaemon, type DrainerDaemon } from "../../services/drainer/src/index.js";
import { metricValue } from "../../services/drainer/test/metrics-text.js";
import { annotations } from "../scenarios/support/annotation-context.js";
import { gadgets } from "../support/gadgets.js";
import { idTypesContext } from "./support/id-types-context.js";

const ROWS = 120;

// Runs once per sink (the vitest projects): integer ids (annotations) and uuid ids (gadgets).
describe("anti-entropy always on: the drainer daemon verifies on its own schedule", () => {
  let ctx: TestContext<EngineSink>;
  let daemon: DrainerDaemon | undefined;
  const collections: Collection<any>[] = [annotations, gadgets];

  /** The next scheduled run of `collection` that satisfies `pred`, as the daemon reports it. */
  const nextRun = async (collection: string, pred: (r: ScheduledVerifyResult) => boolean) => {
    for (;;) {
      const [r] = (await once(daemon!.events, "verifyRun")) as [ScheduledVerifyResult];
      if (r.collection === collection && r.status === "done" && pred(r)) return r;
    }
  };
  const alerts = async () => (await (await fetch(`http://127.0.0.1:${daemon!.port}/alerts`)).json()) as AlertsReport;
  const alert = async (name: string) => (await alerts()).alerts.find((a) => a.name === name)!;

  beforeAll(async () => {
    ctx = await idTypesContext(collections, ROWS);
  });
  afterAll(async () => {
    await daemon?.stop();
    await ctx.close();
  });

  it("finds and repairs drift made behind its back within its interval, with no command typed; the drift alert fires, then clears", async () => {
    daemon = await startDrainerDaemon({
      db: ctx.db,
      sink: ctx.sink,
      collections,
      logger: pino({ level: "silent" }),
      port: 0,
      host: "127.0.0.1",
      drainer: { intervalMs: 200 },
      maintenance: { intervalMs: 200 },
      // Short intervals for the test; small buckets so the drift is found by drilling down.
      verify: { fastIntervalMs: 1_000, deepIntervalMs: 0, bucketSize: 40, documentsPerSecond: 100_000 },
    });
    // The first scheduled runs: nothing differs.
    const [first] = await Promise.all([nextRun("annotation", () => true), nextRun("gadget", () => true)]);
    expect(first).toMatchObject({ driftedTotal: 0, documentsCompared: ROWS });
    expect(await alert("verify_drift_found")).toMatchObject({ firing: false });
    expect(await alert("verify_overdue")).toMatchObject({ firing: false });

    // No run may be under way while the drift is made (it could see half of it): hold each
    // collection's scheduled run under a lease of the test's own, taken only once none runs.
    for (const c of ["annotation", "gadget"]) {
      await waitFor(() => startScheduledRun(ctx.db, c, "fast", "test-hold", 3_600_000), { what: `no scheduled run of ${c} under way` });
    }

    // Behind tether's back: a document deleted in the engine, a row edited by SQL (no capture
    // trigger on these tables: no job), for each id type.
    const pick = async (table: string) =>
      (await sql<{ id: string }>`SELECT id::text AS id FROM ${sql.table(table)} ORDER BY id LIMIT 2`.execute(ctx.db)).rows.map((r) => r.id);
    const [annDeleted, annEdited] = await pick("annotation");
    const [gadDeleted, gadEdited] = await pick("gadget");
    await ctx.raw.delete(annotations.index, annDeleted!);
    await ctx.raw.delete(gadgets.index, gadDeleted!);
    await sql`UPDATE annotation SET text = 'edited by SQL', version = nextval('tether.version_seq') WHERE id = ${annEdited}::bigint`.execute(ctx.db);
    await sql`UPDATE gadget SET name = 'edited by SQL', version = nextval('tether.version_seq') WHERE id = ${gadEdited}::uuid`.execute(ctx.db);
    // Released: the next runs start after every edit.
    await sql`DELETE FROM tether.verify_run WHERE lease_owner = 'test-hold'`.execute(ctx.db);

    const [annFound, gadFound] = await Promise.all([nextRun("annotation", (r) => r.driftedTotal > 0), nextRun("gadget", (r) => r.driftedTotal > 0)]);
    for (const found of [annFound, gadFound]) expect(found.drifted).toMatchObject({ missing: 1, stale: 1, ghost: 0, deleted_live: 0 });
    const firing = await alert("verify_drift_found");
    expect(firing).toMatchObject({ firing: true });
    expect(firing.value).toBeGreaterThanOrEqual(2);
    const metrics = await (await fetch(`http://127.0.0.1:${daemon.port}/metrics`)).text();
    expect(metricValue(metrics, "tether_verify_drift", { collection: "gadget", mode: "fast", kind: "missing" })).toBe(1);

    // The repairs went through the queue; a later run finds nothing and the alert clears.
    await Promise.all([nextRun("annotation", (r) => r.driftedTotal === 0), nextRun("gadget", (r) => r.driftedTotal === 0)]);
    expect(await alert("verify_drift_found")).toMatchObject({ firing: false, value: 0 });
    // The drainer applies the repairs (a run while they are queued counts them as described by a job, not drift).
    const repaired = async (table: string, index: string, ids: string[]) => {
      const rows = await sql<{ id: string; version: string }>`
        SELECT id::text AS id, version::text FROM ${sql.table(table)} WHERE id::text = ANY(${ids}::text[])`.execute(ctx.db);
      const states = await ctx.sink.fetchStates(index, rows.rows.map((r) => r.id));
      return rows.rows.length === 2 && rows.rows.every((r) => states.get(r.id)?.version === Number(r.version) && !states.get(r.id)!.deleted);
    };
    await waitFor(() => repaired("annotation", annotations.index, [annDeleted!, annEdited!]), { what: "the annotations repaired" });
    await waitFor(() => repaired("gadget", gadgets.index, [gadDeleted!, gadEdited!]), { what: "the gadgets repaired" });
    const tags = await sql<{ tag: string }>`SELECT DISTINCT tag FROM tether.job_stat`.execute(ctx.db);
    expect(tags.rows.map((t) => t.tag)).toContain("verify");

    // The overdue rule's anchor for a collection before its first completed run: its first run's start.
    const firstStart = await sql<{ at: string }>`SELECT extract(epoch FROM min(started_at))::text AS at FROM tether.verify_run WHERE collection = 'gadget' AND mode = 'fast'`.execute(ctx.db);
    const exposed = await (await fetch(`http://127.0.0.1:${daemon.port}/metrics`)).text();
    expect(metricValue(exposed, "tether_verify_scheduled_since_timestamp_seconds", { collection: "gadget", mode: "fast" })).toBeCloseTo(Number(firstStart.rows[0]!.at), 2);
  });
});
