import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { sql } from "kysely";
import { createWriter, Drainer, entityKey, rebuildIndex, verifyCollection, VerifyNeedsRebuildError, type Collection } from "@tether/core";
import type { EngineSink } from "@tether/search-sink";
import type { TestContext } from "@tether/testkit";
import { drainToEmpty } from "../scenarios/support/drain.js";
import { createGadgetContext, gadgets } from "../support/gadgets.js";
import { createTicketContext, tickets } from "../support/tickets.js";

// Small buckets so a few hundred rows exercise every level: top buckets, splits, leaves.
const SMALL = { bucketSize: 50, leafSize: 10, fanout: 4 };
const ROWS = 300;

interface Case {
  what: string;
  collection: Collection<any>;
  create: () => Promise<TestContext<EngineSink>>;
  values: (i: number) => Record<string, unknown>;
}

const cases: Case[] = [
  { what: "uuid ids", collection: gadgets, create: createGadgetContext, values: (i) => ({ name: `gadget ${i}` }) },
  // Text ids of every shape, integer-looking ones among them (their key is the integer itself).
  { what: "text ids", collection: tickets, create: createTicketContext, values: (i) => ({ id: i % 10 === 0 ? String(i * 7) : `case ${i}/Zoë@example.com`, subject: `about ${i}`, tags: [] }) },
];

// Runs once per sink (the vitest projects).
describe.each(cases)("the bucketed verify of a collection with $what", ({ collection, create, values }) => {
  let ctx: TestContext<EngineSink>;
  let ids: string[];
  const table = sql.table(collection.table);
  const drain = () => drainToEmpty(new Drainer({ db: ctx.db, sink: ctx.sink, collections: [collection] }), ctx.db);

  beforeAll(async () => {
    ctx = await create();
    await ctx.sink.ensureIndex(collection.index, collection.mappings);
    const writer = createWriter({ graceMs: 0 });
    ids = [];
    for (let i = 0; i < ROWS; i++) {
      const { row } = await writer.createWithJob(ctx.db, collection, values(i));
      ids.push(String((row as { id: string }).id));
    }
    await drain();
  });
  afterAll(() => ctx.close());

  it("stores each document's bucket key, the one Postgres computes for its id", async () => {
    const keys = await sql<{ id: string; key: string }>`SELECT id::text AS id, tether.entity_key(id::text)::text AS key FROM ${table}`.execute(ctx.db);
    for (const { id, key } of keys.rows.slice(0, 40)) {
      expect(String(entityKey(id)), id).toBe(key);
      const doc = await ctx.raw.get(collection.index, id);
      expect(String((doc.source as { tether: { key: unknown } }).tether.key), id).toBe(key);
    }
  });

  it("compares buckets of hashed keys, finds nothing when both sides agree, and counts every document once", async () => {
    const report = await verifyCollection(ctx.db, ctx.sink, collection, SMALL);
    expect(report).toMatchObject({ driftedTotal: 0, bucketsDiffering: 0, leavesCompared: 0, enqueued: 0, documentsCompared: ROWS });
    expect(report.bucketsCompared).toBeGreaterThanOrEqual(ROWS / SMALL.bucketSize);
  });

  it("finds each drift class by drilling into the differing buckets, repairs through the queue (tag verify), then finds none", async () => {
    const [deleted, edited, softDeleted] = [ids[11]!, ids[42]!, ids[77]!];
    // A document deleted behind tether's back; a row edited by SQL with capture off (its version
    // moves, no job); a row soft-deleted the same way; a document whose row never existed.
    await ctx.raw.delete(collection.index, deleted);
    await sql`UPDATE ${table} SET version = nextval('tether.version_seq') WHERE id::text = ${edited}`.execute(ctx.db);
    await sql`UPDATE ${table} SET deleted_at = now(), version = nextval('tether.version_seq') WHERE id::text = ${softDeleted}`.execute(ctx.db);
    const ghost = collection === gadgets ? "00000000-0000-4000-8000-000000000001" : "ghost ticket";
    await ctx.sink.write(collection.index, [{ kind: "index", id: ghost, version: 5, document: collection.toDocument(values(1) as never) }]);

    const report = await verifyCollection(ctx.db, ctx.sink, collection, SMALL);
    expect(report).toMatchObject({ driftedTotal: 4, drifted: { missing: 1, stale: 1, ghost: 1, deleted_live: 1 }, enqueued: 4 });
    expect(report.samples).toMatchObject({ missing: [deleted], stale: [edited], ghost: [ghost], deleted_live: [softDeleted] });
    expect(report.leavesCompared).toBeGreaterThan(0);
    expect(report.bucketsDiffering).toBeLessThan(report.bucketsCompared);
    const jobs = await sql<{ id: string }>`SELECT kwargs->>'id' AS id FROM tether.job WHERE tag = 'verify' ORDER BY 1`.execute(ctx.db);
    expect(jobs.rows.map((j) => j.id)).toEqual([deleted, edited, softDeleted, ghost].sort());

    await drain();
    expect(await verifyCollection(ctx.db, ctx.sink, collection, SMALL)).toMatchObject({ driftedTotal: 0, enqueued: 0 });
  });

  it("says when documents written before the bucket key lack it, and runs once tether rebuild wrote them again", async () => {
    const id = ids[5]!;
    const doc = await ctx.raw.get(collection.index, id);
    const { key: _key, ...meta } = (doc.source as { tether: Record<string, unknown> }).tether;
    await ctx.raw.index(collection.index, id, { ...doc.source, tether: meta });
    const refused = await verifyCollection(ctx.db, ctx.sink, collection, SMALL).catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(VerifyNeedsRebuildError);
    expect(refused).toMatchObject({ unkeyed: 1, message: expect.stringContaining(`tether rebuild ${collection.name}`) });

    await rebuildIndex(ctx.db, ctx.sink, collection);
    expect(await verifyCollection(ctx.db, ctx.sink, collection, SMALL)).toMatchObject({ driftedTotal: 0, documentsCompared: ROWS - 1 });
  });
});
