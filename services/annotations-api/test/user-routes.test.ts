import { sql } from "kysely";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { annotations } from "@tether/annotations";
import { deepVerifyCollection, Drainer, enableCapture, verifyCollection } from "@tether/core";
import type { EngineSink } from "@tether/search-sink";
import { admin, createApiContext, type ApiContext } from "./support/api-context.js";

/**
 * The seed's case: annotation documents embed their author's display name and hidden flag, and
 * a change of the author (through the API's user routes or by plain SQL with capture on)
 * re-syncs every annotation of that author: one fan-out job in the writing transaction, expanded
 * by the drainer a chunk at a time. Runs on both engines (vitest.config.ts's perSink list).
 */

const ANN = "acct:ann@example.com";
const BOB = "acct:bob@example.com";
const CAT = "acct:cat@example.com";

let ctx: ApiContext<EngineSink>;
beforeAll(async () => {
  // No grace period: the drains below take the API writes' own jobs too, and every job left is new.
  ctx = await createApiContext({ graceMs: 0 }, { sink: "per-project" });
});
afterAll(() => ctx.close());

/** Drains until nothing is due (chunks of 2: a user's fan-out takes several); returns what the fan-outs did. */
async function drain(): Promise<{ fanouts: number; expanded: number }> {
  let fanouts = 0;
  let expanded = 0;
  const r = await new Drainer({ db: ctx.db, sink: ctx.sink, collections: [annotations], fanoutChunkSize: 2 }).drainUntilEmpty({
    onPass: (p) => {
      fanouts += p.fanout?.finished ?? 0;
      expanded += p.fanout?.expanded ?? 0;
    },
  });
  expect(r.error).toBeUndefined();
  return { fanouts, expanded };
}

const source = async (id: string) => (await ctx.raw.get(annotations.index, id)).source;

/** Every document equals what `load` + `toDocument` build from the rows now, at the row's version. */
async function expectCurrent(ids: readonly string[]): Promise<void> {
  const rows = await annotations.load!(ctx.db, ids);
  expect(rows).toHaveLength(ids.length);
  for (const row of rows) {
    const doc = await ctx.raw.get(annotations.index, row.id);
    const { tether: meta, ...body } = doc.source ?? {};
    expect(body, `annotation ${row.id}`).toEqual(annotations.toDocument(row));
    expect((meta as { version?: number } | undefined)?.version ?? doc.version, `annotation ${row.id}`).toBe(Number(row.version));
  }
}

const versions = async (ids: readonly string[]) =>
  (await sql<{ id: string; version: string }>`SELECT id::text, version::text FROM annotation WHERE id = ANY(${[...ids]}::bigint[]) ORDER BY id`.execute(ctx.db)).rows.map((r) => `${r.id}@${r.version}`);

const jobs = async () => (await sql<{ name: string; tag: string; kwargs: Record<string, unknown> }>`SELECT name, tag, kwargs FROM tether.job ORDER BY id`.execute(ctx.db)).rows;
const hiddenCount = () => ctx.raw.count(annotations.index, { term: { user_hidden: true } });

async function post(user: string, n: number): Promise<string[]> {
  const ids: string[] = [];
  for (let i = 0; i < n; i++) {
    const res = await ctx.app.inject({ method: "POST", url: "/api/annotations", payload: { user, uri: `https://example.com/${i}`, text: `note ${i} by ${user}` } });
    expect(res.statusCode, res.body).toBe(201);
    ids.push(res.json().id);
  }
  return ids;
}

async function call(method: "GET" | "PUT" | "PATCH" | "DELETE", userid: string, payload?: object) {
  const res = await ctx.app.inject({ method, url: `/api/users/${encodeURIComponent(userid)}`, ...(payload ? { payload } : {}) });
  return { status: res.statusCode, body: res.body ? res.json() : undefined, headers: res.headers };
}

const searchIds = async (qs: string) => {
  await ctx.refresh();
  const res = await ctx.app.inject({ method: "GET", url: `/api/search?limit=200${qs}` });
  expect(res.statusCode, res.body).toBe(200);
  return { total: res.json().total as number, ids: (res.json().rows as { id: string }[]).map((r) => r.id).sort() };
};

describe("annotation authors through the API", () => {
  let anns: string[];
  let bobs: string[];

  beforeAll(async () => {
    anns = await post(ANN, 5);
    bobs = await post(BOB, 2);
    await drain();
  });

  it("an author with no users row keeps the document annotations always had", async () => {
    for (const id of [...anns, ...bobs]) {
      const doc = await source(id);
      expect(doc).toMatchObject({ user: expect.any(String) });
      expect(doc).not.toHaveProperty("user_display_name");
      expect(doc).not.toHaveProperty("user_hidden");
    }
    await expectCurrent([...anns, ...bobs]);
  });

  it("creating a user costs the request one fan-out job; the drainer re-syncs every annotation of theirs", async () => {
    const before = await versions(anns);
    const created = await call("PUT", ANN, { displayName: "Ann" });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    expect(created.headers.location).toBe(`/api/users/${encodeURIComponent(ANN)}`);
    expect(created.body).toEqual({ user: ANN, displayName: "Ann", hidden: false, fanouts: 1 });
    // O(1) in the request: no annotation was touched, one job names the user.
    expect(await versions(anns)).toEqual(before);
    expect(await jobs()).toEqual([expect.objectContaining({ name: "fanout_annotation", tag: "fanout:user.insert", kwargs: expect.objectContaining({ embed: "author", link: ANN }) })]);

    expect(await drain()).toEqual({ fanouts: 1, expanded: 5 });
    for (const id of anns) expect(await source(id)).toMatchObject({ user: ANN, user_display_name: "Ann", user_hidden: false });
    for (const id of bobs) expect(await source(id)).not.toHaveProperty("user_display_name");
    await expectCurrent([...anns, ...bobs]);
    expect(await jobs()).toEqual([]);
    expect((await call("GET", ANN)).body).toEqual({ user: ANN, displayName: "Ann", hidden: false });
  });

  it("renaming a user re-syncs their annotations' display name", async () => {
    const renamed = await call("PATCH", ANN, { displayName: "Ann Bee" });
    expect(renamed).toMatchObject({ status: 200, body: { user: ANN, displayName: "Ann Bee", hidden: false, fanouts: 1 } });
    expect((await jobs()).map((j) => j.tag)).toEqual(["fanout:user.update"]);
    expect(await drain()).toEqual({ fanouts: 1, expanded: 5 });
    for (const id of anns) expect(await source(id)).toMatchObject({ user_display_name: "Ann Bee" });
    await expectCurrent([...anns, ...bobs]);
  });

  it("hiding a user takes their annotations out of search at once, and out of the index's matches once drained; include_hidden=true brings them back", async () => {
    expect(await call("PATCH", ANN, { hidden: true })).toMatchObject({ status: 200, body: { hidden: true, displayName: "Ann Bee", fanouts: 1 } });
    // Before the drainer: the documents do not say so yet, Postgres does.
    expect(await hiddenCount()).toBe(0);
    expect(await searchIds("")).toEqual({ total: 2, ids: [...bobs].sort() });
    await drain();
    expect(await hiddenCount()).toBe(5);
    for (const id of anns) expect(await source(id)).toMatchObject({ user_hidden: true });
    await expectCurrent([...anns, ...bobs]);
    expect(await searchIds("")).toEqual({ total: 2, ids: [...bobs].sort() });
    expect(await searchIds(`&user=${encodeURIComponent(ANN)}`)).toEqual({ total: 0, ids: [] });
    expect(await searchIds("&include_hidden=true")).toEqual({ total: 7, ids: [...anns, ...bobs].sort() });
    expect(await searchIds("&include_hidden=false")).toEqual({ total: 2, ids: [...bobs].sort() });
    // The console's trace reads the annotation through the collection's load: in sync, author included.
    const trace = await ctx.app.inject({ method: "GET", url: `/admin/trace/annotation/${anns[0]}`, headers: admin });
    expect(trace.statusCode, trace.body).toBe(200);
    expect(trace.json()).toMatchObject({ verdict: "in_sync", downstream: { contentMatches: true }, postgres: { row: { user_display_name: "Ann Bee", user_hidden: true } } });
  });

  it("a PUT replaces the whole user (what it leaves out takes its default) and answers 200", async () => {
    const replaced = await call("PUT", ANN, { displayName: "Ann" });
    expect(replaced).toMatchObject({ status: 200, body: { user: ANN, displayName: "Ann", hidden: false, fanouts: 1 } });
    expect(replaced.headers.location).toBeUndefined();
    await drain();
    expect(await hiddenCount()).toBe(0);
    await expectCurrent([...anns, ...bobs]);
  });

  it("deleting a user brings their annotations back to the document of an author with no users row", async () => {
    expect((await call("DELETE", ANN)).status).toBe(204);
    expect((await jobs()).map((j) => j.tag)).toEqual(["fanout:user.delete"]);
    expect(await drain()).toEqual({ fanouts: 1, expanded: 5 });
    for (const id of anns) expect(await source(id)).not.toHaveProperty("user_display_name");
    await expectCurrent([...anns, ...bobs]);
    const missing = await call("GET", ANN);
    expect(missing).toMatchObject({ status: 404, body: { error: "not_found", message: `user ${ANN} not found` } });
    expect(await call("DELETE", ANN)).toMatchObject({ status: 404, body: { error: "not_found" } });
    expect(await call("PATCH", ANN, { hidden: true })).toMatchObject({ status: 404, body: { error: "not_found" } });
  });

  it("addresses any user id an annotation may carry: 256 characters, non-ASCII, a slash, a space", async () => {
    for (const userid of ["é".repeat(256), "acct:a/b c?d#e%f@example.com"]) {
      const [id] = await post(userid, 1);
      await drain();
      expect(await call("PUT", userid, { displayName: "Long", hidden: true })).toMatchObject({ status: 201, body: { user: userid, hidden: true, fanouts: 1 } });
      expect((await call("GET", userid)).body).toEqual({ user: userid, displayName: "Long", hidden: true });
      await drain();
      expect(await source(id!)).toMatchObject({ user: userid, user_display_name: "Long", user_hidden: true });
      expect((await call("DELETE", userid)).status).toBe(204);
      await drain();
      await expectCurrent([id!]);
    }
  });

  it("refuses a bad user or body naming the field, and writes nothing", async () => {
    const before = JSON.stringify([await jobs(), await sql`SELECT * FROM annotation_user ORDER BY userid`.execute(ctx.db).then((r) => r.rows)]);
    const bad = [
      [await call("PUT", BOB, { displayName: "Bob", admin: true }), "admin"],
      [await call("PUT", BOB, { hidden: "yes" }), "hidden"],
      [await call("PUT", BOB, { displayName: "" }), "displayName"],
      [await call("PUT", BOB, { displayName: "x".repeat(257) }), "displayName"],
      [await call("PATCH", BOB, {}), undefined],
      [await call("PUT", "u".repeat(257), { displayName: "long" }), "userid"],
      [await call("PUT", "é".repeat(257), { displayName: "long" }), "userid"],
    ] as const;
    for (const [res, field] of bad) {
      expect(res.status, JSON.stringify(res.body)).toBe(400);
      expect(res.body, JSON.stringify(res.body)).toMatchObject({ error: "validation" });
      if (field) expect(res.body.field).toBe(field);
    }
    const search = await ctx.app.inject({ method: "GET", url: "/api/search?include_hidden=yes" });
    expect(search.statusCode).toBe(400);
    expect(search.json()).toMatchObject({ error: "validation", field: "include_hidden" });
    expect(JSON.stringify([await jobs(), await sql`SELECT * FROM annotation_user ORDER BY userid`.execute(ctx.db).then((r) => r.rows)])).toBe(before);
  });
});

describe("annotation authors changed by plain SQL with capture on", () => {
  let cats: string[];

  beforeAll(async () => {
    await enableCapture(ctx.db, annotations, { graceMs: 0 });
    const r = await sql<{ id: string }>`
      INSERT INTO annotation (userid, target_uri, text) SELECT ${CAT}, 'https://example.com/cat/' || g, 'cat ' || g FROM generate_series(1, 7) g RETURNING id::text`.execute(ctx.db);
    cats = r.rows.map((x) => x.id);
    await drain();
    await expectCurrent(cats);
  });

  it("an INSERT, a rename, a hide and a DELETE of the users row each cost one fan-out job and reach all 7 annotations", async () => {
    const steps: [string, () => Promise<unknown>, Record<string, unknown> | undefined][] = [
      ["fanout:user.insert", () => sql`INSERT INTO annotation_user (userid, display_name) VALUES (${CAT}, 'Cat')`.execute(ctx.db), { user_display_name: "Cat", user_hidden: false }],
      ["fanout:user.update", () => sql`UPDATE annotation_user SET display_name = 'Kat' WHERE userid = ${CAT}`.execute(ctx.db), { user_display_name: "Kat", user_hidden: false }],
      ["fanout:user.update", () => sql`UPDATE annotation_user SET hidden = true WHERE userid = ${CAT}`.execute(ctx.db), { user_display_name: "Kat", user_hidden: true }],
      ["fanout:user.delete", () => sql`DELETE FROM annotation_user WHERE userid = ${CAT}`.execute(ctx.db), undefined],
    ];
    for (const [tag, statement, author] of steps) {
      const before = await versions(cats);
      await statement();
      expect(await versions(cats), tag).toEqual(before);
      expect(await jobs(), tag).toEqual([expect.objectContaining({ name: "fanout_annotation", tag, kwargs: expect.objectContaining({ embed: "author", link: CAT }) })]);
      expect(await drain(), tag).toEqual({ fanouts: 1, expanded: 7 });
      for (const id of cats) {
        const doc = await source(id);
        if (author) expect(doc, tag).toMatchObject(author);
        else expect(doc, tag).not.toHaveProperty("user_hidden");
      }
      await expectCurrent(cats);
    }
  });

  it("a rolled-back change enqueues nothing; one UPDATE of two users enqueues one fan-out job each", async () => {
    await sql`INSERT INTO annotation_user (userid, display_name) VALUES (${CAT}, 'Cat'), (${BOB}, 'Bob')`.execute(ctx.db);
    await drain();
    await sql`UPDATE annotation_user SET hidden = true`.execute(ctx.db);
    expect(await drain()).toEqual({ fanouts: 2, expanded: 9 });
    await expect(
      ctx.db.transaction().execute(async (trx) => {
        await sql`UPDATE annotation_user SET hidden = false`.execute(trx);
        throw new Error("rolled back");
      }),
    ).rejects.toThrow("rolled back");
    expect(await jobs()).toEqual([]);
    await sql`UPDATE annotation_user SET display_name = upper(display_name)`.execute(ctx.db);
    expect((await jobs()).map((j) => `${j.tag} ${String(j.kwargs.link)}`).sort()).toEqual([`fanout:user.update ${BOB}`, `fanout:user.update ${CAT}`]);
    expect(await drain()).toEqual({ fanouts: 2, expanded: 9 });
    for (const id of cats) expect(await source(id)).toMatchObject({ user_display_name: "CAT", user_hidden: true });
    await expectCurrent(cats);
  });

  it("an annotation moved to another author by plain SQL embeds its new author's", async () => {
    await sql`UPDATE annotation SET userid = ${BOB} WHERE id = ${cats[0]!}::bigint`.execute(ctx.db);
    await drain();
    expect(await source(cats[0]!)).toMatchObject({ user: BOB, user_display_name: "BOB", user_hidden: true });
    await expectCurrent(cats);
  });

  it("both verify modes find nothing to repair afterwards", async () => {
    const fast = await verifyCollection(ctx.db, ctx.sink, annotations, { enqueue: false });
    expect(fast.driftedTotal).toBe(0);
    const deep = await deepVerifyCollection(ctx.db, ctx.sink, annotations, { enqueue: false });
    expect(deep.driftedTotal).toBe(0);
  });
});
