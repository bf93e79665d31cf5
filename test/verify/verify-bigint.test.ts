import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { sql } from "kysely";
import { deepVerifyCollection, Drainer, finishRebuild, rebuildIndex, verifyCollection, type VerifyOptions } from "@tether/core";
import type { EngineSink } from "@tether/search-sink";
import type { TestContext } from "@tether/testkit";
import { annotations, createAnnotationContext } from "../scenarios/support/annotation-context.js";
import { drainToEmpty } from "../scenarios/support/drain.js";

// Ids where a double gives way: 2^53 and 2^53 + 1 (which a double rounds to 2^53), and the top
// of bigint, 2^63 - 2 and 2^63 - 1. Beside them a few small ones.
const TWO_53 = "9007199254740992";
const TWO_53_PLUS_1 = "9007199254740993";
const MAX_MINUS_1 = "9223372036854775806";
const MAX = "9223372036854775807";
const IDS = ["1", "2", "3", "70000", TWO_53, TWO_53_PLUS_1, MAX_MINUS_1, MAX];

// Small buckets so a drift splits buckets before a leaf; the defaults go straight to leaves.
const SMALL: VerifyOptions = { bucketSize: 100, leafSize: 20, fanout: 4 };

// Runs once per sink (the vitest projects).
describe("the bucketed verify over the whole bigint key space", () => {
  let ctx: TestContext<EngineSink>;
  const index = annotations.index;

  const drain = () => drainToEmpty(new Drainer({ db: ctx.db, sink: ctx.sink, collections: [annotations] }), ctx.db);
  const verifyJobIds = async () =>
    (await sql<{ id: string }>`SELECT kwargs->>'id' AS id FROM tether.job WHERE tag = 'verify' ORDER BY (kwargs->>'id')::numeric`.execute(ctx.db)).rows.map((r) => r.id);

  beforeAll(async () => {
    ctx = await createAnnotationContext({ sink: "per-project" });
    // Rows written behind tether's back (no job): the first verify finds them all missing.
    await sql`
      INSERT INTO annotation (id, userid, target_uri, text) OVERRIDING SYSTEM VALUE
      SELECT i::bigint, 'acct:big@example.com', 'https://example.com/' || i, 'note ' || i FROM unnest(${IDS}::text[]) AS i`.execute(ctx.db);
  });
  afterAll(() => ctx.close());

  it("finds every row missing from the engine, ids past 2^53 exactly, and repairs them through its jobs", async () => {
    const report = await verifyCollection(ctx.db, ctx.sink, annotations, SMALL);
    expect(report.drifted).toEqual({ missing: IDS.length, stale: 0, ghost: 0, deleted_live: 0, embedded: 0 });
    expect(report.samples.missing.sort()).toEqual([...IDS].sort());
    expect(report.idRange).toEqual({ from: "0", to: (2n ** 63n).toString() });
    expect(await verifyJobIds()).toEqual(IDS);
    await drain();
    for (const id of [TWO_53_PLUS_1, MAX]) expect((await ctx.raw.get(index, id)).source?.text).toBe(`note ${id}`);
  });

  it("reports no drift when both sides agree, with small buckets and with the defaults", async () => {
    for (const opts of [SMALL, {}]) {
      const report = await verifyCollection(ctx.db, ctx.sink, annotations, opts);
      expect(report).toMatchObject({ bucketsDiffering: 0, driftedTotal: 0, enqueued: 0, leavesCompared: 0 });
    }
    expect(await verifyJobIds()).toEqual([]);
  });

  it("detects a missing document at 2^63 - 1 and a stale one at 2^53 + 1, not their neighbours, and repairs both", async () => {
    await ctx.raw.delete(index, MAX);
    // A stale row: Postgres moved on with plain SQL, the engine still holds version 1.
    await sql`UPDATE annotation SET text = 'edited', version = version + 1 WHERE id = ${TWO_53_PLUS_1}::bigint`.execute(ctx.db);

    const report = await verifyCollection(ctx.db, ctx.sink, annotations, SMALL);
    expect(report.drifted).toEqual({ missing: 1, stale: 1, ghost: 0, deleted_live: 0, embedded: 0 });
    expect(report.samples).toMatchObject({ missing: [MAX], stale: [TWO_53_PLUS_1] });
    expect(await verifyJobIds()).toEqual([TWO_53_PLUS_1, MAX]);

    await drain();
    expect((await ctx.raw.get(index, TWO_53_PLUS_1)).source?.text).toBe("edited");
    expect((await ctx.raw.get(index, TWO_53)).source?.text).toBe(`note ${TWO_53}`);
    expect((await ctx.raw.get(index, MAX)).found).toBe(true);
    for (const opts of [SMALL, {}]) expect(await verifyCollection(ctx.db, ctx.sink, annotations, opts)).toMatchObject({ driftedTotal: 0, bucketsDiffering: 0 });
  });

  it("detects a document missing at 2^53 + 1 and one edited downstream at 2^63 - 1 with the default buckets", async () => {
    await ctx.raw.delete(index, TWO_53_PLUS_1);
    // An edit behind tether's back: the engine bumps its own version, the stored hash stays.
    await ctx.raw.update(index, MAX, { text: "patched downstream" });

    const report = await verifyCollection(ctx.db, ctx.sink, annotations);
    expect(report.drifted).toEqual({ missing: 1, stale: 1, ghost: 0, deleted_live: 0, embedded: 0 });
    expect(report.samples).toMatchObject({ missing: [TWO_53_PLUS_1], stale: [MAX] });
    expect(await verifyJobIds()).toEqual([TWO_53_PLUS_1, MAX]);

    await drain();
    expect((await ctx.raw.get(index, MAX)).source?.text).toBe(`note ${MAX}`);
    expect((await ctx.raw.get(index, TWO_53_PLUS_1)).source?.text).toBe("edited");
    expect(await verifyCollection(ctx.db, ctx.sink, annotations, SMALL)).toMatchObject({ driftedTotal: 0, bucketsDiffering: 0 });
  });

  it("sees a document of an id Postgres does not have past 2^53 as a ghost", async () => {
    const stranger = "9223372036854775805";
    await ctx.sink.write(index, [{ kind: "index", id: stranger, version: 1, document: { text: "never in postgres" } }]);
    const report = await verifyCollection(ctx.db, ctx.sink, annotations, SMALL);
    expect(report.drifted).toEqual({ missing: 0, stale: 0, ghost: 1, deleted_live: 0, embedded: 0 });
    expect(report.samples.ghost).toEqual([stranger]);
    await drain();
    expect(await verifyCollection(ctx.db, ctx.sink, annotations, SMALL)).toMatchObject({ driftedTotal: 0 });
  });

  it("rebuilds the index with its verify passes over these ids, and the deep verify finds nothing", async () => {
    const rebuilt = await rebuildIndex(ctx.db, ctx.sink, annotations, { verify: SMALL });
    expect(rebuilt).toMatchObject({ rowsLoaded: IDS.length, caughtUp: 0 });
    await finishRebuild(ctx.db, ctx.sink, annotations);
    for (const id of [TWO_53_PLUS_1, MAX]) expect((await ctx.raw.get(index, id)).found).toBe(true);
    expect(await verifyCollection(ctx.db, ctx.sink, annotations, SMALL)).toMatchObject({ driftedTotal: 0, bucketsDiffering: 0 });
    expect(await deepVerifyCollection(ctx.db, ctx.sink, annotations)).toMatchObject({ driftedTotal: 0, orphans: 0, enqueued: 0 });
  });
});
