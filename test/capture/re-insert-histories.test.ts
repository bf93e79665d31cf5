import { Readable } from "node:stream";
import { pipeline } from "node:stream/promises";
import { sql } from "kysely";
import pg from "pg";
import { from as copyFrom } from "pg-copy-streams";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createWriter, deepVerifyCollection, verifyCollection } from "@tether/core";
import { startFaultProxy } from "@tether/testkit";
import { createEntryContext, entries, type EntryContext } from "../support/entries.js";

/**
 * Histories that give an id a second life (delete + re-insert, a key change, an upsert, MERGE,
 * COPY), with capture on: the new life's versions start above everything the old one used, so
 * the drain writes the new body and both verify modes see the difference until it does.
 * Runs once per sink.
 */
describe("an id that is deleted and comes back", () => {
  let ctx: EntryContext;
  beforeAll(async () => {
    ctx = await createEntryContext();
  });
  afterAll(() => ctx.close());

  const insert = async (id: number, body: string) => {
    await sql`INSERT INTO entry (id, body) OVERRIDING SYSTEM VALUE VALUES (${id}, ${body})`.execute(ctx.db);
  };
  const tombstoneOf = async (id: string) => {
    const r = await sql<{ v: string }>`SELECT max((kwargs->>'version')::bigint)::text AS v FROM tether.job WHERE kwargs->>'id' = ${id} AND kwargs ? 'version'`.execute(ctx.db);
    return Number(r.rows[0]!.v);
  };

  it("holds the re-inserted text above the tombstone's version after a plain DELETE + INSERT in one transaction", async () => {
    await insert(1, "original");
    await ctx.drain();
    expect(await ctx.doc("1")).toMatchObject({ body: "original", deleted: false });
    const tombstone = await ctx.db.transaction().execute(async (trx) => {
      await sql`DELETE FROM entry WHERE id = 1`.execute(trx);
      await sql`INSERT INTO entry (id, body) OVERRIDING SYSTEM VALUE VALUES (1, 'replacement')`.execute(trx);
      const r = await sql<{ v: string }>`SELECT (kwargs->>'version') AS v FROM tether.job WHERE kwargs->>'id' = '1' AND kwargs ? 'version'`.execute(trx);
      return Number(r.rows[0]!.v);
    });
    const row = (await ctx.row("1"))!;
    expect(row.version).toBeGreaterThan(tombstone);
    await ctx.drain();
    expect(await ctx.doc("1")).toMatchObject({ version: row.version, body: "replacement", deleted: false });
  });

  it("holds the re-inserted text after a plain DELETE and an INSERT in two transactions, and fast verify sees the old document until the drain", async () => {
    await insert(2, "original");
    await ctx.drain();
    await sql`DELETE FROM entry WHERE id = 2`.execute(ctx.db);
    const tombstone = await tombstoneOf("2");
    await insert(2, "replacement");
    const row = (await ctx.row("2"))!;
    expect(row.version).toBeGreaterThan(tombstone);

    // Not drained yet: Elasticsearch still holds the first life's document. Both verify modes see it.
    const fast = await verifyCollection(ctx.db, ctx.sink, entries, { enqueue: false });
    expect(fast.samples.stale).toContain("2");
    const deep = await deepVerifyCollection(ctx.db, ctx.sink, entries, { enqueue: false });
    expect(deep.driftedTotal).toBeGreaterThan(0);

    await ctx.drain();
    expect(await ctx.doc("2")).toMatchObject({ version: row.version, body: "replacement", deleted: false });
    expect((await verifyCollection(ctx.db, ctx.sink, entries, { enqueue: false })).driftedTotal).toBe(0);
    expect((await deepVerifyCollection(ctx.db, ctx.sink, entries, { enqueue: false })).driftedTotal).toBe(0);
  });

  it("writes the writer's re-created row when its hard delete and its create with the same id are drained in one batch after an outage", async () => {
    const proxy = await startFaultProxy({ target: ctx.downstreamUrl });
    try {
      const writer = createWriter({ sink: ctx.sinkAt(proxy.url), graceMs: 0, directSyncTimeoutMs: 2_000, breaker: false });
      await writer.createWithJob(ctx.db, entries, { id: "3", body: "first life" } as never);
      await ctx.drain();
      await proxy.setMode("refuse");
      const gone = await writer.deleteWithJob(ctx.db, entries, "3", { hard: true });
      const back = await writer.createWithJob(ctx.db, entries, { id: "3", body: "second life" } as never);
      expect([gone.sync, back.sync]).toEqual(["error", "error"]);
      expect(Number(back.row!.version)).toBeGreaterThan(gone.changes[0]!.deletedVersion!);
      expect(await ctx.jobCount()).toBe(2);
      const drained = await ctx.drain();
      expect(drained.claimed).toBe(2);
      expect(await ctx.doc("3")).toMatchObject({ version: Number(back.row!.version), body: "second life", deleted: false });
    } finally {
      await proxy.close();
    }
  });

  it("gives a changed primary key a version above the new id's tombstone and tombstones the old id", async () => {
    await insert(4, "four");
    await insert(5, "five");
    await ctx.drain();
    await sql`DELETE FROM entry WHERE id = 5`.execute(ctx.db);
    const tombstone5 = await tombstoneOf("5");
    await ctx.drain();
    await sql`UPDATE entry SET id = 5 WHERE id = 4`.execute(ctx.db);
    const row = (await ctx.row("5"))!;
    expect(row.version).toBeGreaterThan(tombstone5);
    await ctx.drain();
    expect(await ctx.doc("5")).toMatchObject({ version: row.version, body: "four", deleted: false });
    expect(await ctx.doc("4")).toMatchObject({ deleted: true });
  });

  it("versions an upsert above the tombstone it re-inserts over and above the row it updates, whatever version its VALUES carry", async () => {
    await insert(6, "six");
    await insert(7, "seven");
    await ctx.drain();
    const before7 = (await ctx.row("7"))!.version;
    await sql`DELETE FROM entry WHERE id = 6`.execute(ctx.db);
    const tombstone6 = await tombstoneOf("6");
    await sql`INSERT INTO entry (id, body, version) OVERRIDING SYSTEM VALUE VALUES (6, 'six again', 1), (7, 'seven edited', 1)
      ON CONFLICT (id) DO UPDATE SET body = EXCLUDED.body, version = EXCLUDED.version`.execute(ctx.db);
    const [six, seven] = [(await ctx.row("6"))!, (await ctx.row("7"))!];
    expect(six.version).toBeGreaterThan(tombstone6);
    expect(seven.version).toBeGreaterThan(before7);
    await ctx.drain();
    expect(await ctx.doc("6")).toMatchObject({ version: six.version, body: "six again", deleted: false });
    expect(await ctx.doc("7")).toMatchObject({ version: seven.version, body: "seven edited", deleted: false });
  });

  it("versions a MERGE that deletes, updates and re-inserts above everything each id used before", async () => {
    await insert(8, "eight");
    await insert(9, "nine");
    await insert(10, "ten");
    await ctx.drain();
    await sql`DELETE FROM entry WHERE id = 10`.execute(ctx.db);
    const tombstone10 = await tombstoneOf("10");
    const before9 = (await ctx.row("9"))!.version;
    const serverVersion = await sql<{ n: string }>`SELECT current_setting('server_version_num') AS n`.execute(ctx.db);
    if (Number(serverVersion.rows[0]!.n) >= 150_000) {
      await sql`MERGE INTO entry e
        USING (VALUES (8, 'drop'), (9, 'nine merged'), (10, 'ten again')) AS s(id, body) ON e.id = s.id
        WHEN MATCHED AND s.body = 'drop' THEN DELETE
        WHEN MATCHED THEN UPDATE SET body = s.body
        WHEN NOT MATCHED THEN INSERT (id, body) OVERRIDING SYSTEM VALUE VALUES (s.id, s.body)`.execute(ctx.db);
    } else {
      // Postgres 14 has no MERGE (the matrix runs this file there too): the same three actions
      // as one transaction of plain statements.
      await ctx.db.transaction().execute(async (trx) => {
        await sql`DELETE FROM entry WHERE id = 8`.execute(trx);
        await sql`UPDATE entry SET body = 'nine merged' WHERE id = 9`.execute(trx);
        await sql`INSERT INTO entry (id, body) OVERRIDING SYSTEM VALUE VALUES (10, 'ten again')`.execute(trx);
      });
    }
    const [nine, ten] = [(await ctx.row("9"))!, (await ctx.row("10"))!];
    expect(nine.version).toBeGreaterThan(before9);
    expect(ten.version).toBeGreaterThan(tombstone10);
    await ctx.drain();
    expect(await ctx.doc("8")).toMatchObject({ deleted: true });
    expect(await ctx.doc("9")).toMatchObject({ version: nine.version, body: "nine merged", deleted: false });
    expect(await ctx.doc("10")).toMatchObject({ version: ten.version, body: "ten again", deleted: false });
  });

  it("versions rows COPY brings back above their tombstones, even when the copied rows carry their old versions", async () => {
    await insert(11, "eleven");
    await insert(12, "twelve");
    await ctx.drain();
    const old = await sql<{ id: string; version: string }>`SELECT id::text, version::text FROM entry WHERE id IN (11, 12) ORDER BY id`.execute(ctx.db);
    await sql`DELETE FROM entry WHERE id IN (11, 12)`.execute(ctx.db);
    const tombstones = [await tombstoneOf("11"), await tombstoneOf("12")];
    await ctx.drain();
    const client = new pg.Client({ connectionString: ctx.databaseUrl });
    await client.connect();
    try {
      const lines = old.rows.map((r) => `${r.id}\t${r.id === "11" ? "eleven copied" : "twelve copied"}\t${r.version}\n`).join("");
      await pipeline(Readable.from([lines]), client.query(copyFrom("COPY entry (id, body, version) FROM STDIN")));
    } finally {
      await client.end();
    }
    const copied = [(await ctx.row("11"))!, (await ctx.row("12"))!];
    expect(copied[0]!.version).toBeGreaterThan(tombstones[0]!);
    expect(copied[1]!.version).toBeGreaterThan(tombstones[1]!);
    await ctx.drain();
    expect(await ctx.doc("11")).toMatchObject({ version: copied[0]!.version, body: "eleven copied", deleted: false });
    expect(await ctx.doc("12")).toMatchObject({ version: copied[1]!.version, body: "twelve copied", deleted: false });
    expect((await verifyCollection(ctx.db, ctx.sink, entries, { enqueue: false })).driftedTotal).toBe(0);
  });
});
