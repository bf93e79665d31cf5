import { sql } from "kysely";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Drainer, enableCapture, migrate, verifyCollection } from "@tether/core";
import { createTestContext, type TestContext } from "@tether/testkit";
import { entries, entryMigrations } from "../support/entries.js";

/**
 * An install from before the version sequence (migration 000005), with rows, versions above
 * anything the sequence would hand out, and a pending job: the migration applies, enabling
 * capture raises the sequence above the table, and every write after it lands above every
 * version the table held.
 */
describe("upgrading an install that already has rows and jobs to the version sequence", () => {
  let ctx: TestContext;
  beforeAll(async () => {
    ctx = await createTestContext();
    await migrate(ctx.db, [entryMigrations]);
    // Back to the schema before migration 000005.
    await sql`DROP FUNCTION tether.next_version(bigint)`.execute(ctx.db);
    await sql`DROP SEQUENCE tether.version_seq`.execute(ctx.db);
    await sql`DELETE FROM tether.migration WHERE namespace = 'tether' AND id = 5`.execute(ctx.db);
    await sql`INSERT INTO entry (id, body, version) OVERRIDING SYSTEM VALUE VALUES (1, 'one', 3), (2, 'two', 7000), (3, 'three', 1)`.execute(ctx.db);
    await sql`INSERT INTO tether.job (name, tag, kwargs) VALUES (${entries.jobName}, 'live', '{"id": "1"}'), (${entries.jobName}, 'live', '{"id": "2"}'), (${entries.jobName}, 'live', '{"id": "3"}')`.execute(ctx.db);
  });
  afterAll(() => ctx.close());

  const version = async (id: number) => Number((await sql<{ v: string }>`SELECT version::text AS v FROM entry WHERE id = ${id}`.execute(ctx.db)).rows[0]!.v);

  it("applies migration 000005, and the writes after enabling capture land above every version the table held", async () => {
    const applied = await migrate(ctx.db, [entryMigrations]);
    expect(applied.applied).toEqual([{ namespace: "tether", id: 5, name: "version_seq" }]);
    await ctx.sink.ensureIndex(entries.index, entries.mappings);
    await enableCapture(ctx.db, entries, { graceMs: 0 });
    const floor = await sql<{ v: string }>`SELECT last_value::text AS v FROM tether.version_seq`.execute(ctx.db);
    expect(Number(floor.rows[0]!.v)).toBe(7000);

    await sql`UPDATE entry SET body = 'one, edited' WHERE id = 1`.execute(ctx.db);
    expect(await version(1)).toBeGreaterThan(7000);
    await sql`DELETE FROM entry WHERE id = 3`.execute(ctx.db);
    await sql`INSERT INTO entry (id, body) OVERRIDING SYSTEM VALUE VALUES (3, 'three, again')`.execute(ctx.db);
    expect(await version(3)).toBeGreaterThan(await version(1));
    expect(await version(2)).toBe(7000);

    const drained = await new Drainer({ db: ctx.db, sink: ctx.sink, collections: [entries] }).drainUntilEmpty();
    expect(drained).toMatchObject({ parked: 0, retried: 0 });
    for (const [id, body] of [[1, "one, edited"], [2, "two"], [3, "three, again"]] as const) {
      expect((await ctx.sink.fetchStates(entries.index, [String(id)])).get(String(id))).toMatchObject({ version: await version(id), deleted: false });
      expect((await ctx.raw.get(entries.index, String(id))).source).toMatchObject({ body });
    }
    expect((await verifyCollection(ctx.db, ctx.sink, entries, { enqueue: false })).driftedTotal).toBe(0);
  });
});
