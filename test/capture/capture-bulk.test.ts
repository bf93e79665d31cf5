import { sql } from "kysely";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Drainer, enableCapture, verifyCollection } from "@tether/core";
import { createWidgetContext, widgets, type WidgetContext } from "../support/widgets.js";

/** Rows of the bulk UPDATE; TETHER_CAPTURE_BULK_ROWS lowers it on a slow machine. */
const ROWS = Number(process.env.TETHER_CAPTURE_BULK_ROWS ?? 100_000);

describe("a bulk UPDATE … WHERE under capture", () => {
  let ctx: WidgetContext;

  beforeAll(async () => {
    ctx = await createWidgetContext();
    await enableCapture(ctx.db, widgets);
  });
  afterAll(() => ctx.close());

  it(`is captured, collapsed and drained (${ROWS} rows)`, { timeout: 600_000 }, async () => {
    await ctx.insertRaw(ROWS, "bulk");
    await sql`INSERT INTO widget (owner, title) VALUES ('other', 'untouched')`.execute(ctx.db);
    const before = await sql<{ n: string }>`SELECT count(*) AS n FROM tether.job`.execute(ctx.db);
    expect(Number(before.rows[0]!.n)).toBe(ROWS + 1);

    const r = await sql`UPDATE widget SET title = title || ' (bulk edit)' WHERE owner = 'bulk'`.execute(ctx.db);
    expect(Number(r.numAffectedRows)).toBe(ROWS);

    const jobs = await sql<{ n: string; entities: string; tags: string[] }>`
      SELECT count(*) AS n, count(DISTINCT kwargs->>'id') AS entities, array_agg(DISTINCT tag) AS tags FROM tether.job`.execute(ctx.db);
    expect(Number(jobs.rows[0]!.n)).toBe(2 * ROWS + 1);
    expect(Number(jobs.rows[0]!.entities)).toBe(ROWS + 1);
    expect(jobs.rows[0]!.tags).toEqual(["capture"]);
    // Every row its own version from the sequence; every edited row above every version before the edit.
    const versions = await sql<{ distinct: string; edited_min: string; untouched: string }>`
      SELECT count(DISTINCT version) AS distinct, min(version) FILTER (WHERE owner = 'bulk') AS edited_min,
             max(version) FILTER (WHERE owner = 'other') AS untouched FROM widget`.execute(ctx.db);
    expect(Number(versions.rows[0]!.distinct)).toBe(ROWS + 1);
    expect(Number(versions.rows[0]!.edited_min)).toBeGreaterThan(Number(versions.rows[0]!.untouched));

    // Two jobs per edited entity (its insert and its update): one write each, the other job confirms.
    const drainer = new Drainer({ db: ctx.db, sink: ctx.sink, collections: [widgets], concurrency: 2, deadlineMs: 120_000 });
    const now = new Date(Date.now() + 3_600_000);
    let repaired = 0;
    let upToDate = 0;
    for (;;) {
      const pass = await drainer.drainOnce({ now });
      expect(pass.error).toBeUndefined();
      repaired += pass.repaired;
      upToDate += pass.up_to_date;
      if (pass.claimed === 0) break;
    }
    expect(repaired).toBe(ROWS + 1);
    expect(upToDate).toBe(ROWS);
    expect(await ctx.jobCount()).toBe(0);
    const report = await verifyCollection(ctx.db, ctx.sink, widgets, { enqueue: false });
    expect(report.driftedTotal).toBe(0);
  });
});
