import { sql } from "kysely";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createWriter, Drainer, nextVersion } from "@tether/core";
import { versionFor, VERSION_WRITES, type VersionWrite } from "@tether/core/internal";
import { createEntryContext, entries, type EntryContext } from "../support/entries.js";
import { shopProducts } from "../support/shop.ts";
import { createShopContext, type ShopContext } from "../support/shop-context.ts";
import { enableCapture } from "@tether/core";

/**
 * The version rule (packages/core/src/write/version-rule.ts), cell by cell, against what
 * Postgres assigns: each write of the table runs for real (writer, captured SQL, drainer) in one
 * session, and the row takes exactly the version the rule gives for the sequence's next value.
 */
describe("the version rule, as Postgres applies it", () => {
  let ctx: EntryContext;
  let nextId = 100;
  const covered = new Set<VersionWrite>();
  const writer = createWriter({ graceMs: 0 });

  beforeAll(async () => {
    ctx = await createEntryContext();
  });
  afterAll(async () => {
    await ctx.close();
  });

  /** s: the value the sequence hands out next. */
  const next = async () => {
    const r = await sql<{ v: string; called: boolean }>`SELECT last_value::text AS v, is_called AS called FROM tether.version_seq`.execute(ctx.db);
    return Number(r.rows[0]!.v) + (r.rows[0]!.called ? 1 : 0);
  };
  const version = async (id: number) => (await ctx.row(String(id)))!.version;
  const fresh = async (body = "x") => {
    const id = nextId++;
    await sql`INSERT INTO entry (id, body) OVERRIDING SYSTEM VALUE VALUES (${id}, ${body})`.execute(ctx.db);
    return { id, old: await version(id) };
  };
  /**
   * Runs `write`, then checks the row (or `actual`) against the rule for `cell`, and the sequence
   * after it (`alsoTaken`: values the same statement took after it, e.g. a key change's tombstone).
   */
  const check = async (cell: VersionWrite, inputs: { old?: number; written?: number; downstream?: number }, write: () => Promise<unknown>, actual: () => Promise<number>, alsoTaken = 0) => {
    const s = await next();
    await write();
    const rule = versionFor(cell, { next: s, ...inputs });
    expect(await actual()).toBe(rule.version);
    expect(await next()).toBe(rule.sequence + 1 + alsoTaken);
    covered.add(cell);
  };

  it("insert of a new id: the writer's create and a plain INSERT take the sequence's next value, a COPY-like INSERT carrying a higher version keeps it", async () => {
    let id = 0;
    await check("insert", {}, async () => (id = Number((await writer.createWithJob(ctx.db, entries, { id: String(nextId++), body: "w" } as never)).changes[0]!.id)), () => version(id));
    await check("insert", {}, () => sql`INSERT INTO entry (id, body) OVERRIDING SYSTEM VALUE VALUES (${(id = nextId++)}, 'plain')`.execute(ctx.db), () => version(id));
    const high = (await next()) + 1000;
    await check("insert", { written: high }, () => sql`INSERT INTO entry (id, body, version) OVERRIDING SYSTEM VALUE VALUES (${(id = nextId++)}, 'legacy', ${high})`.execute(ctx.db), () => version(id));
  });

  it("insert of an id that lived: above the tombstone its delete took", async () => {
    const { id } = await fresh();
    await sql`DELETE FROM entry WHERE id = ${id}`.execute(ctx.db);
    const tombstone = Number((await sql<{ v: string }>`SELECT kwargs->>'version' AS v FROM tether.job WHERE kwargs->>'id' = ${String(id)} AND kwargs ? 'version'`.execute(ctx.db)).rows[0]!.v);
    await check("reinsert", { written: 1 }, () => sql`INSERT INTO entry (id, body, version) OVERRIDING SYSTEM VALUE VALUES (${id}, 'again', 1)`.execute(ctx.db), () => version(id));
    expect(await version(id)).toBeGreaterThan(tombstone);
  });

  it("update keeping the key: the writer's update, a plain UPDATE, one that writes version + 1 and one that lowers it all take one new value", async () => {
    const { id, old } = await fresh();
    await check("update", { old }, () => writer.updateWithJob(ctx.db, entries, String(id), { body: "writer" }), () => version(id));
    let o = await version(id);
    await check("update", { old: o }, () => sql`UPDATE entry SET body = 'plain' WHERE id = ${id}`.execute(ctx.db), () => version(id));
    o = await version(id);
    await check("update", { old: o, written: o + 1 }, () => sql`UPDATE entry SET body = 'plus one', version = version + 1 WHERE id = ${id}`.execute(ctx.db), () => version(id));
    o = await version(id);
    await check("update", { old: o, written: 1 }, () => sql`UPDATE entry SET body = 'lowered', version = 1 WHERE id = ${id}`.execute(ctx.db), () => version(id));
  });

  it("update changing the key: the new id takes one new value", async () => {
    const { id, old } = await fresh();
    const to = nextId++;
    await check("key_change", { old, written: old }, () => sql`UPDATE entry SET id = ${to} WHERE id = ${id}`.execute(ctx.db), async () => {
      // The old id's tombstone took the value after the new id's.
      const t = await sql<{ v: string }>`SELECT kwargs->>'version' AS v FROM tether.job WHERE kwargs->>'id' = ${String(id)} AND kwargs ? 'version'`.execute(ctx.db);
      expect(Number(t.rows[0]!.v)).toBe((await version(to)) + 1);
      return version(to);
    }, 1);
  });

  it("tombstone: a hard delete's job carries one new value above the row's last version", async () => {
    const { id, old } = await fresh();
    await check("tombstone", { old }, () => sql`DELETE FROM entry WHERE id = ${id}`.execute(ctx.db), async () =>
      Number((await sql<{ v: string }>`SELECT kwargs->>'version' AS v FROM tether.job WHERE kwargs->>'id' = ${String(id)} AND kwargs ? 'version'`.execute(ctx.db)).rows[0]!.v),
    );
    const gone = await fresh();
    let tombstone = 0;
    await check("tombstone", { old: gone.old }, async () => (tombstone = (await writer.deleteWithJob(ctx.db, entries, String(gone.id), { hard: true })).changes[0]!.deletedVersion!), async () => tombstone);
  });

  it("leapfrog: the drainer passes a document ahead of the row with one new value, above the document's version", async () => {
    const { id } = await fresh("mine");
    await ctx.drain();
    const ahead = (await next()) + 500;
    await ctx.sink.write(entries.index, [{ kind: "index", id: String(id), version: ahead, document: { body: "foreign" } }]);
    await sql`INSERT INTO tether.job (name, tag, kwargs) VALUES (${entries.jobName}, 'test', jsonb_build_object('id', ${String(id)}::text))`.execute(ctx.db);
    const drainer = new Drainer({ db: ctx.db, sink: ctx.sink, collections: [entries] });
    await check("leapfrog", { downstream: ahead }, () => drainer.drainOnce(), () => version(id));
    // The bump is committed before the engine sees it: the next pass writes the document at it.
    expect(await ctx.doc(String(id))).toMatchObject({ version: ahead, body: "foreign", deleted: false });
    await drainer.drainOnce();
    expect(await ctx.doc(String(id))).toMatchObject({ version: await version(id), body: "mine", deleted: false });
  });

  it("your own statement in writeWithJobs: nextVersion takes one new value, version + 1 counts from the row and leaves the sequence alone", async () => {
    const { id, old } = await fresh();
    const own = (version: ReturnType<typeof nextVersion>) => () =>
      writer.writeWithJobs(ctx.db, entries, async (trx) => {
        const rows = await trx.updateTable("entry").set({ body: "own", version }).where("id", "=", id).returningAll().execute();
        return rows.map((row) => ({ id: String(row.id), row: row as never }));
      });
    await check("own_next_version", { old }, own(nextVersion("version")), () => version(id));
    const o = await version(id);
    await check("own_plus_one", { old: o }, own(sql<string>`version + 1`), () => version(id));
  });

  it("documents from several tables: a direct embed's change, a fan-out's expansion and a pass meeting a pending change each take one new value above the document's", async () => {
    let shop: ShopContext | undefined;
    try {
      shop = await createShopContext();
      const db = shop.db;
      await enableCapture(db, shopProducts, { graceMs: 0 });
      const seq = async () => {
        const r = await sql<{ v: string; called: boolean }>`SELECT last_value::text AS v, is_called AS called FROM tether.version_seq`.execute(db);
        return Number(r.rows[0]!.v) + (r.rows[0]!.called ? 1 : 0);
      };
      const v = async (id: string) => Number((await sql<{ v: string }>`SELECT version::text AS v FROM shop_product WHERE id = ${id}::bigint`.execute(db)).rows[0]!.v);
      const cell = async (c: VersionWrite, inputs: { old: number; downstream?: number }, write: () => Promise<unknown>, id: string, taken = 0) => {
        const s = await seq();
        await write();
        const rule = versionFor(c, { next: s + taken, ...inputs });
        expect(await v(id)).toBe(rule.version);
        covered.add(c);
      };
      const category = (await sql<{ id: string }>`INSERT INTO shop_category (name) VALUES ('c') RETURNING id::text AS id`.execute(db)).rows[0]!.id;
      const p = (await sql<{ id: string }>`INSERT INTO shop_product (name, category_id) VALUES ('p', ${category}::bigint) RETURNING id::text AS id`.execute(db)).rows[0]!.id;
      const drainer = () => new Drainer({ db, sink: shop!.sink, collections: [shopProducts] });
      await drainer().drainUntilEmpty();
      await cell("embed_direct", { old: await v(p) }, () => sql`INSERT INTO shop_stock (product_id, quantity) VALUES (${p}::bigint, 1)`.execute(db), p);
      // The rename takes the change's own value first (tether.embed_change); the expansion the next one.
      await sql`UPDATE shop_category SET name = 'renamed' WHERE id = ${category}::bigint`.execute(db);
      await cell("embed_fanout", { old: await v(p) }, () => drainer().drainOnce(), p);
      await drainer().drainUntilEmpty();
      // A pending change met by a pass before its fan-out (held by pausing its lane).
      await sql`INSERT INTO tether.paused_name (name) VALUES ('fanout_shop_product')`.execute(db);
      await sql`UPDATE shop_category SET name = 'again' WHERE id = ${category}::bigint`.execute(db);
      await sql`INSERT INTO tether.job (name, tag, kwargs) VALUES ('sync_shop_product', 'test', jsonb_build_object('id', ${p}::text))`.execute(db);
      const downstream = (await shop.raw.get(shopProducts.index, p)).version!;
      await cell("embed_pending", { old: await v(p), downstream }, () => drainer().drainOnce(), p);
      // Written by the next pass, at the version the bump committed.
      await drainer().drainOnce();
      expect(await shop.raw.get(shopProducts.index, p)).toMatchObject({ version: await v(p), source: { category: "again" } });
    } finally {
      await shop?.close();
    }
  });

  it("covers every cell of the rule", () => {
    expect([...covered].sort()).toEqual([...VERSION_WRITES].sort());
  });
});
