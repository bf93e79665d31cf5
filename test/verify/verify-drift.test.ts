import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { sql } from "kysely";
import { createWriter, Drainer, verifyCollection, type VerifyProgress } from "@tether/core";
import type { EngineSink } from "@tether/search-sink";
import type { TestContext } from "@tether/testkit";
import { annotations, createAnnotationContext, insertRawAnnotations } from "../scenarios/support/annotation-context.js";
import { auditAnnotations, auditSummary } from "@tether/testkit";
import { drainToEmpty } from "../scenarios/support/drain.js";

// Small buckets so a few hundred rows exercise every level: top buckets, splits, leaves.
const SMALL = { bucketSize: 100, leafSize: 20, fanout: 4 };

// Runs once per sink (the vitest projects).
describe("anti-entropy verification of a whole collection", () => {
  let ctx: TestContext<EngineSink>;
  let ids: string[];
  const index = annotations.index;

  beforeAll(async () => {
    ctx = await createAnnotationContext({ sink: "per-project" });
    const writer = createWriter({ sink: ctx.sink, graceMs: 0 });
    ids = [];
    for (let i = 0; i < 300; i++) {
      const { row } = await writer.createWithJob(ctx.db, annotations, { userid: `acct:u${i % 5}@example.com`, target_uri: `https://example.com/${i}`, text: `note ${i}` });
      ids.push(String((row as { id: string }).id));
    }
    await new Drainer({ db: ctx.db, sink: ctx.sink, collections: [annotations] }).drainUntilEmpty();
  });
  afterAll(() => ctx.close());

  const verifyJobs = async () =>
    (await sql<{ id: string; priority: number }>`SELECT kwargs->>'id' AS id, priority FROM tether.job WHERE tag = 'verify' ORDER BY (kwargs->>'id')::bigint`.execute(ctx.db)).rows;

  it("reports no drift and enqueues nothing when both sides agree, and reports progress to the end", async () => {
    const progress: VerifyProgress[] = [];
    const report = await verifyCollection(ctx.db, ctx.sink, annotations, { ...SMALL, onProgress: (p) => progress.push(p) });
    expect(report).toMatchObject({ bucketsDiffering: 0, driftedTotal: 0, enqueued: 0, leavesCompared: 0 });
    expect(report.bucketsCompared).toBeGreaterThanOrEqual(3);
    expect(progress.at(-1)).toMatchObject({ done: progress.at(-1)!.total, drifted: 0 });
    expect(await verifyJobs()).toEqual([]);
  });

  it("finds drift made behind tether's back, enqueues one repair job per drifted entity, and after a drain reports none", async () => {
    const raw = ctx.raw;
    // Documents deleted in the search engine.
    const deletedInEs = [ids[3]!, ids[150]!, ids[299]!];
    for (const id of deletedInEs) await raw.delete(index, id);
    // Documents edited in Elasticsearch: a plain index call (internal versioning bumps _version
    // though the stored tether metadata is copied unchanged), and a partial update.
    const editedInEs = [ids[10]!, ids[11]!];
    const src = await raw.get(index, editedInEs[0]!);
    await raw.index(index, editedInEs[0]!, { ...src.source, text: "edited behind tether's back" });
    await raw.update(index, editedInEs[1]!, { text: "patched behind tether's back" });
    // Rows written by a migration that bypassed the engine.
    const migrated = await insertRawAnnotations(ctx.db, 4);
    // Rows edited and soft-deleted with plain SQL.
    const editedInPg = ids[40]!;
    await sql`UPDATE annotation SET text = 'sql edit', version = version + 1 WHERE id = ${editedInPg}`.execute(ctx.db);
    const softDeletedInPg = ids[41]!;
    await sql`UPDATE annotation SET deleted_at = now(), version = version + 1 WHERE id = ${softDeletedInPg}`.execute(ctx.db);
    // Ghost documents: a row hard-deleted with plain SQL, and a document Postgres never had.
    const hardDeletedInPg = ids[42]!;
    await sql`DELETE FROM annotation WHERE id = ${hardDeletedInPg}`.execute(ctx.db);
    const stranger = "7000000";
    await ctx.sink.write(annotations.index, [{ kind: "index", id: stranger, version: 3, document: { text: "never in postgres" } }]);

    const report = await verifyCollection(ctx.db, ctx.sink, annotations, SMALL);
    expect(report.drifted).toEqual({ missing: deletedInEs.length + migrated.length, stale: editedInEs.length + 1, ghost: 2, deleted_live: 1, embedded: 0 });
    expect(report.samples.ghost.sort()).toEqual([hardDeletedInPg, stranger].sort());
    expect(report.samples.stale.sort()).toEqual([...editedInEs, editedInPg].sort());
    expect(report.samples.deleted_live).toEqual([softDeletedInPg]);
    expect(report.enqueued).toBe(report.driftedTotal);
    expect(report.bucketsDiffering).toBeGreaterThan(0);
    const jobs = await verifyJobs();
    expect(jobs.map((j) => j.id).sort()).toEqual(
      [...deletedInEs, ...migrated, ...editedInEs, editedInPg, softDeletedInPg, hardDeletedInPg, stranger].sort(),
    );
    expect(new Set(jobs.map((j) => j.priority))).toEqual(new Set([500]));

    // Documents deleted behind tether's back leave delete markers that refuse the first repair;
    // the drainer leapfrogs them and the retry lands.
    await drainToEmpty(new Drainer({ db: ctx.db, sink: ctx.sink, collections: [annotations] }), ctx.db);
    const again = await verifyCollection(ctx.db, ctx.sink, annotations, SMALL);
    expect(again).toMatchObject({ driftedTotal: 0, bucketsDiffering: 0, enqueued: 0 });
    expect(auditSummary(await auditAnnotations(ctx.db, ctx.sink))).toEqual({ lost: 0, stale: 0, duplicates: 0, jobs: 0, parked: 0 });

    // Postgres wins the content; its version leapfrogged the edits made downstream.
    const doc = await raw.get(index, editedInEs[1]!);
    const row = (await sql<{ text: string; version: string }>`SELECT text, version::text FROM annotation WHERE id = ${editedInEs[1]!}`.execute(ctx.db)).rows[0]!;
    expect(doc.source?.text).toBe(row.text);
    expect(doc.version).toBe(Number(row.version));
    expect(Number(row.version)).toBeGreaterThan(1);
    // A document Postgres never had is replaced by a tombstone: no late write brings it back.
    const ghost = await raw.get(index, stranger);
    expect(ghost.found).toBe(true);
    expect((ghost.source as { tether?: { deleted?: boolean } } | undefined)?.tether?.deleted).toBe(true);
  });

  it("only reports when asked not to enqueue", async () => {
    await ctx.raw.delete(index, ids[7]!);
    const report = await verifyCollection(ctx.db, ctx.sink, annotations, { ...SMALL, enqueue: false });
    expect(report).toMatchObject({ drifted: { missing: 1, stale: 0, ghost: 0, deleted_live: 0, embedded: 0 }, enqueued: 0 });
    expect(await verifyJobs()).toEqual([]);
    await verifyCollection(ctx.db, ctx.sink, annotations, SMALL);
    await drainToEmpty(new Drainer({ db: ctx.db, sink: ctx.sink, collections: [annotations] }), ctx.db);
    expect(await verifyCollection(ctx.db, ctx.sink, annotations, SMALL)).toMatchObject({ driftedTotal: 0 });
  });

  it("checks an empty collection against stray documents", async () => {
    const empty = await createAnnotationContext({ sink: "per-project" });
    try {
      expect(await verifyCollection(empty.db, empty.sink, annotations)).toMatchObject({ idRange: null, driftedTotal: 0 });
      await empty.sink.write(annotations.index, [{ kind: "index", id: "42", version: 1, document: { text: "stray" } }]);
      const report = await verifyCollection(empty.db, empty.sink, annotations);
      expect(report.drifted.ghost).toBe(1);
      expect(report.samples.ghost).toEqual(["42"]);
    } finally {
      await empty.close();
    }
  });

  it("rejects nonsensical bucket options with a validation error", async () => {
    await expect(verifyCollection(ctx.db, ctx.sink, annotations, { bucketSize: 0 })).rejects.toMatchObject({ code: "E_VALIDATION", field: "bucketSize" });
    await expect(verifyCollection(ctx.db, ctx.sink, annotations, { fanout: 1 })).rejects.toMatchObject({ code: "E_VALIDATION", field: "fanout" });
  });
});
