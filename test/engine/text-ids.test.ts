import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { sql } from "kysely";
import { createWriter, deepVerifyCollection, Drainer, enableCapture, rebuildIndex, ValidationError } from "@tether/core";
import type { EngineSink } from "@tether/search-sink";
import type { TestContext } from "@tether/testkit";
import { drainToEmpty } from "../scenarios/support/drain.js";
import { createTicketContext, tickets } from "../support/tickets.js";

/** 512 bytes of UTF-8 exactly: 255 two-byte letters and two one-byte ones. */
const EDGE = `${"é".repeat(255)}ab`;
// Quotes, backslashes, commas, braces and the word NULL: the drainer sends a pass's ids as one array literal.
const TEXT_IDS = ["jane.doe@example.com", "2024/0001", "HD 7", "Zoë 東京", " padded ", "?q=1#frag", "%2F", "..", 'say "hi"', "back\\slash", "a,b{c}", "NULL", EDGE];

// Runs once per sink (the vitest projects): the ids go to Elasticsearch and to OpenSearch raw.
describe("text ids: any id the rule allows syncs, anything else is refused before COMMIT", () => {
  let ctx: TestContext<EngineSink>;
  const drainer = () => new Drainer({ db: ctx.db, sink: ctx.sink, collections: [tickets] });
  const counts = async () =>
    (await sql<{ rows: number; jobs: number }>`SELECT (SELECT count(*) FROM ticket)::int AS rows, (SELECT count(*) FROM tether.job)::int AS jobs`.execute(ctx.db)).rows[0]!;
  /** Each row's version (they come from one global sequence, so each row has its own). */
  const rowVersions = async (ids: string[]) =>
    new Map((await sql<{ id: string; version: string }>`SELECT id, version FROM ticket WHERE id = ANY(${ids})`.execute(ctx.db)).rows.map((r) => [r.id, Number(r.version)]));

  beforeAll(async () => {
    ctx = await createTicketContext();
    await ctx.sink.ensureIndex(tickets.index, tickets.mappings);
  });
  afterAll(() => ctx.close());

  it("syncs ids with @, /, spaces, non-ASCII and at the 512-byte edge, by the drainer and by the direct sync, and deep verify, orphan removal and rebuild read them back", async () => {
    expect(Buffer.byteLength(EDGE)).toBe(512);
    // Through the drainer: no direct sync, the job is due at once.
    const queued = createWriter({ graceMs: 0 });
    for (const id of TEXT_IDS) await queued.createWithJob(ctx.db, tickets, { id, subject: `about ${id}`, tags: ["queued"] });
    const passes = await drainToEmpty(drainer(), ctx.db);
    expect(passes.reduce((n, p) => n + p.parked, 0)).toBe(0);
    // Through the direct sync after COMMIT.
    const direct = createWriter({ sink: ctx.sink, directSyncTimeoutMs: 30_000, graceMs: 0 });
    for (const id of TEXT_IDS.filter((x) => x !== EDGE)) {
      const { sync } = await direct.createWithJob(ctx.db, tickets, { id: `${id}/direct`, subject: "direct", tags: [] }, { tag: "direct" });
      expect(sync, id).toBe("ok");
    }
    const all = [...TEXT_IDS, ...TEXT_IDS.filter((x) => x !== EDGE).map((id) => `${id}/direct`)];
    const states = await ctx.sink.fetchStates(tickets.index, all);
    const versions = await rowVersions(all);
    for (const id of all) expect(states.get(id), id).toMatchObject({ version: versions.get(id), deleted: false });
    // One create, one version: the creates took consecutive values of the sequence, none twice.
    const taken = all.map((id) => versions.get(id)!).sort((a, b) => a - b);
    expect(taken).toEqual(taken.map((_, i) => taken[0]! + i));

    // A document edited behind tether's back and an orphan, both with text ids, then a deep verify.
    await ctx.raw.update(tickets.index, "Zoë 東京", { subject: "defaced" });
    await ctx.raw.index(tickets.index, "stray @ doc/ü", { subject: "written by something else" });
    const drifted = await deepVerifyCollection(ctx.db, ctx.sink, tickets);
    expect(drifted).toMatchObject({ driftedTotal: 1, samples: { stale: ["Zoë 東京"], orphan: ["stray @ doc/ü"] }, orphansRemoved: 1, enqueued: 1 });
    await drainToEmpty(drainer(), ctx.db);
    expect(await deepVerifyCollection(ctx.db, ctx.sink, tickets)).toMatchObject({ driftedTotal: 0, orphans: 0, scanned: all.length });

    // A rebuild copies every text id into a new index behind the alias.
    const rebuilt = await rebuildIndex(ctx.db, ctx.sink, tickets);
    expect(rebuilt.rowsLoaded).toBe(all.length);
    expect(await deepVerifyCollection(ctx.db, ctx.sink, tickets)).toMatchObject({ driftedTotal: 0, scanned: all.length });
    expect((await ctx.sink.fetchStates(tickets.index, [EDGE])).get(EDGE)).toMatchObject({ version: versions.get(EDGE), deleted: false });
  });

  it("refuses an id past 512 bytes, an empty id and an id with NUL or a lone surrogate with a ValidationError naming it, and writes nothing", async () => {
    const before = await counts();
    const writer = createWriter({ sink: ctx.sink });
    const cases: [string, RegExp][] = [
      ["x".repeat(513), /513 bytes of UTF-8; the engine's document _id holds at most 512/],
      [`${EDGE}c`, /513 bytes/],
      ["", /cannot be empty/],
      ["a\u0000b", /NUL/],
      ["a\ud800", /surrogate/],
    ];
    for (const [id, message] of cases) {
      const attempt = writer.createWithJob(ctx.db, tickets, { id, subject: "never", tags: [] });
      await expect(attempt, JSON.stringify(id.slice(0, 20))).rejects.toThrow(ValidationError);
      await expect(writer.createWithJob(ctx.db, tickets, { id, subject: "never", tags: [] })).rejects.toThrow(message);
      // In the caller's transaction too: the error comes before any statement.
      await expect(ctx.db.transaction().execute((trx) => writer.createWithJob(trx, tickets, { id, subject: "never", tags: [] }))).rejects.toThrow(ValidationError);
    }
    await expect(writer.createWithJob(ctx.db, tickets, { id: "x".repeat(513), subject: "never", tags: [] })).rejects.toThrow(`invalid id "${"x".repeat(40)}…"`);
    await expect(writer.updateWithJob(ctx.db, tickets, "y".repeat(600), { subject: "never" })).rejects.toThrow(ValidationError);
    await expect(writer.deleteWithJob(ctx.db, tickets, "a\u0000")).rejects.toThrow(ValidationError);
    expect(await counts()).toEqual(before);
  });

  it("parks a job whose row plain SQL wrote with an id past the limit, naming the id, and syncs the rest of its batch", async () => {
    await enableCapture(ctx.db, tickets, { graceMs: 0 });
    const long = "z".repeat(600);
    await sql`INSERT INTO ticket (id, subject) VALUES (${long}, 'too long'), ('captured/ok', 'fine')`.execute(ctx.db);
    const passes = await drainToEmpty(drainer(), ctx.db);
    expect(passes.reduce((n, p) => n + p.parked, 0)).toBe(1);
    const dead = (await sql<{ last_error: string }>`SELECT last_error FROM tether.dead_job WHERE kwargs->>'id' = ${long}`.execute(ctx.db)).rows;
    expect(dead).toHaveLength(1);
    expect(dead[0]!.last_error).toMatch(/malformed kwargs: kwargs\.id: invalid id "z{40}…": it is 600 bytes of UTF-8; the engine's document _id holds at most 512/);
    // The capture trigger's BEFORE INSERT took one version per row: the two rows hold two consecutive values.
    const captured = await rowVersions([long, "captured/ok"]);
    expect(Math.abs(captured.get(long)! - captured.get("captured/ok")!)).toBe(1);
    expect((await ctx.sink.fetchStates(tickets.index, ["captured/ok"])).get("captured/ok")).toMatchObject({ version: captured.get("captured/ok"), deleted: false });
  });
});
