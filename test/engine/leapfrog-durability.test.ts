import { sql, type Kysely } from "kysely";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createDb, createWriter, Drainer, verifyCollection } from "@tether/core";
import { createEntryContext, entries, type EntryContext } from "../support/entries.js";

/**
 * A drain whose transaction dies after its bulk reached the engine and before COMMIT. The death
 * is made certain, not raced: a deferred constraint trigger fails the COMMIT of any transaction
 * of the "doomed" drainer's sessions that confirms or retries a job, so the engine has taken the
 * bulk and Postgres undoes everything the drain did (its confirmations, and its version bump).
 * Whatever version the engine was given must never come back with another body, and the engine is
 * never given a version its row does not hold once committed. Runs once per sink.
 */
describe("a drain that dies after its bulk left and before COMMIT", () => {
  let ctx: EntryContext;
  let doomedDb: Kysely<any>;
  let doomed: Drainer;

  beforeAll(async () => {
    ctx = await createEntryContext();
    await sql`CREATE FUNCTION die_at_commit() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        IF current_setting('application_name') = 'doomed-drain' THEN RAISE EXCEPTION 'the drain dies before COMMIT'; END IF;
        RETURN NULL;
      END $$`.execute(ctx.db);
    await sql`CREATE CONSTRAINT TRIGGER die_at_commit AFTER UPDATE OR DELETE ON tether.job
      DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION die_at_commit()`.execute(ctx.db);
    doomedDb = createDb({ connectionString: ctx.databaseUrl, max: 2, applicationName: "doomed-drain" });
    doomed = new Drainer({ db: doomedDb, sink: ctx.sink, collections: [entries] });
  });
  afterAll(async () => {
    await doomedDb.destroy();
    await ctx.close();
  });

  const insert = (id: number, body: string) => sql`INSERT INTO entry (id, body) OVERRIDING SYSTEM VALUE VALUES (${id}, ${body})`.execute(ctx.db);
  const enqueue = (id: string) => sql`INSERT INTO tether.job (name, tag, kwargs) VALUES (${entries.jobName}, 'test', jsonb_build_object('id', ${id}::text))`.execute(ctx.db);
  const dieAfterBulk = async () => {
    const pass = await doomed.drainOnce();
    expect(pass.error).toMatch(/dies before COMMIT/);
    return pass;
  };

  it("history 5: insert, drain, delete, drain, re-insert, a drain that dies after its bulk, two updates: the document ends equal to the row", async () => {
    await insert(1, "C1");
    await ctx.drain();
    await sql`DELETE FROM entry WHERE id = 1`.execute(ctx.db);
    await ctx.drain();
    expect(await ctx.doc("1")).toMatchObject({ deleted: true });
    await insert(1, "R1");
    await dieAfterBulk();
    // The engine took the bulk; Postgres kept the job (the drain rolled back).
    expect(await ctx.doc("1")).toMatchObject({ body: "R1" });
    expect(await ctx.jobCount()).toBeGreaterThan(0);
    await sql`UPDATE entry SET body = 'C3' WHERE id = 1`.execute(ctx.db);
    await sql`UPDATE entry SET body = 'C4' WHERE id = 1`.execute(ctx.db);
    await ctx.drain();
    const row = (await ctx.row("1"))!;
    expect(row.body).toBe("C4");
    expect(await ctx.doc("1")).toMatchObject({ version: row.version, body: "C4", deleted: false });
    expect(await ctx.jobCount()).toBe(0);
  });

  it("never sends the engine a version its row does not hold: a leapfrog's bump that dies uncommitted reached no document, and the repair ends equal to the row", async () => {
    await insert(2, "R1");
    await ctx.drain();
    const v = (await ctx.row("2"))!.version;
    // Edited behind tether's back, one version ahead of the row.
    await ctx.sink.write(entries.index, [{ kind: "index", id: "2", version: v + 1, document: { body: "foreign" } }]);
    await enqueue("2");
    await dieAfterBulk();
    // The pass raised the row past the edit and died before COMMIT: the raise is undone, and the
    // engine was never sent it (a pass that sent it could be followed by one that confirms the
    // job against the unbumped row before the write lands: a document at a version no row had).
    expect(await ctx.doc("2")).toMatchObject({ version: v + 1, body: "foreign", deleted: false });
    expect((await ctx.row("2"))!.version).toBe(v);
    expect(await ctx.jobCount()).toBe(1);

    // Two updates, one counting from the row's version: the next drain writes the last one above the edit.
    await sql`UPDATE entry SET body = 'C3', version = version + 1 WHERE id = 2`.execute(ctx.db);
    await createWriter({ graceMs: 0 }).updateWithJob(ctx.db, entries, "2", { body: "C4" });
    await ctx.drain();
    const row = (await ctx.row("2"))!;
    expect(row.version).toBeGreaterThan(v + 1);
    expect(await ctx.doc("2")).toMatchObject({ version: row.version, body: "C4", deleted: false });
    expect((await verifyCollection(ctx.db, ctx.sink, entries, { enqueue: false })).driftedTotal).toBe(0);
  });

  it("enqueues no job of its own for the leapfrog's version bump when capture is on: the bumping pass keeps the job, due at once, and the next confirms it", async () => {
    await insert(3, "mine");
    await ctx.drain();
    const v = (await ctx.row("3"))!.version;
    await ctx.sink.write(entries.index, [{ kind: "index", id: "3", version: v + 5, document: { body: "foreign" } }]);
    await enqueue("3");
    expect(await ctx.jobCount()).toBe(1);
    const drainer = new Drainer({ db: ctx.db, sink: ctx.sink, collections: [entries] });
    expect(await drainer.drainOnce()).toMatchObject({ claimed: 1, raised: 1, retried: 0, repaired: 0 });
    const row = (await ctx.row("3"))!;
    expect(row.version).toBeGreaterThan(v + 5);
    // One change, one job: the bump was the drained job's own work.
    expect(await ctx.jobCount()).toBe(1);
    expect(await drainer.drainOnce()).toMatchObject({ claimed: 1, repaired: 1 });
    expect(await ctx.doc("3")).toMatchObject({ version: row.version, body: "mine", deleted: false });
    expect(await ctx.jobCount()).toBe(0);
  });
});
