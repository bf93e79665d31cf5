import { sql } from "kysely";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { insertJobs, VerifyScheduler } from "@tether/core/internal";
import type { EngineSink } from "@tether/search-sink";
import type { TestContext } from "@tether/testkit";
import { annotations } from "../scenarios/support/annotation-context.js";
import { idTypesContext, SCHEDULED_CASES } from "./support/id-types-context.js";

const ROWS = 40;

// Runs once per sink (the vitest projects): fast and deep runs, integer ids (annotations) and uuid ids (gadgets).
describe.each(SCHEDULED_CASES)("a scheduled $mode verify of $collection.name while jobs are queued", ({ collection, mode }) => {
  let ctx: TestContext<EngineSink>;

  beforeAll(async () => {
    ctx = await idTypesContext([collection], ROWS);
  });
  afterAll(() => ctx?.close());

  it("does not count as drift an entity whose job is still queued, and counts and repairs the others", async () => {
    const ids = (await sql<{ id: string }>`SELECT id::text AS id FROM ${sql.table(collection.table)} ORDER BY id LIMIT 4`.execute(ctx.db)).rows.map((r) => r.id);
    const [deletedQueued, deleted, editedQueued, edited] = ids as [string, string, string, string];
    // Behind tether's back: two documents deleted in the engine, two rows edited by SQL (no capture: no job).
    await ctx.raw.delete(collection.index, deletedQueued);
    await ctx.raw.delete(collection.index, deleted);
    const cast = collection === annotations ? sql`bigint` : sql`uuid`;
    const column = collection === annotations ? sql.ref("text") : sql.ref("name");
    await sql`UPDATE ${sql.table(collection.table)} SET ${column} = 'edited by SQL', version = nextval('tether.version_seq')
              WHERE id = ANY(${[editedQueued, edited]}::${cast}[])`.execute(ctx.db);
    // Two of them have a job on its way (a write in its grace period): a job describes them.
    await insertJobs(ctx.db, [deletedQueued, editedQueued].map((entityId) => ({ name: collection.jobName, entityId, priority: 100, tag: "live", delayMs: 3_600_000 })));

    const scheduler = new VerifyScheduler(ctx.db, ctx.sink, [collection], {
      fastIntervalMs: mode === "fast" ? 3_600_000 : 0,
      deepIntervalMs: mode === "deep" ? 3_600_000 : 0,
      bucketSize: 10,
      documentsPerSecond: 1_000_000,
      deepDocumentsPerSecond: 1_000_000,
    });
    const [result] = await scheduler.runDue();
    expect(result).toMatchObject({ collection: collection.name, mode, status: "done", driftedTotal: 2 });
    expect(result!.drifted).toMatchObject({ missing: 1, stale: 1 });

    // Repairs for the two no job described, none for the two already queued.
    const repairs = await sql<{ id: string }>`SELECT kwargs->>'id' AS id FROM tether.job WHERE tag = 'verify' ORDER BY 1`.execute(ctx.db);
    expect(repairs.rows.map((r) => r.id).sort()).toEqual([deleted, edited].sort());
    const recorded = await sql<{ drifted_total: number }>`SELECT drifted_total FROM tether.verify_run WHERE started_by = 'scheduler' AND mode = ${mode}`.execute(ctx.db);
    expect(recorded.rows).toEqual([{ drifted_total: 2 }]);
  });
});
