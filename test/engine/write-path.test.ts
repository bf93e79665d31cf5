import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Kysely, PostgresDialect, sql } from "kysely";
import pg from "pg";
import net from "node:net";
import { createWriter, defineCollection, ValidationError } from "@tether/core";
import { startFaultProxy } from "@tether/testkit";
import { createWidgetContext, widgets, type WidgetContext, type WidgetRow } from "../support/widgets.js";

async function jobsFor(ctx: WidgetContext, id: string) {
  const r = await sql<{ name: string; tag: string; priority: number; delay: number }>`
    SELECT name, tag, priority, extract(epoch FROM scheduled_at - enqueued_at)::float AS delay
    FROM tether.job WHERE kwargs->>'id' = ${id}`.execute(ctx.db);
  return r.rows;
}

describe("the write path", () => {
  let ctx: WidgetContext;
  beforeAll(async () => {
    ctx = await createWidgetContext();
  });
  afterAll(() => ctx.close());

  it("commits the row and its job together and syncs the document right after commit", async () => {
    // A generous timeout: this is about what commits and syncs, not about the timeout (tested below).
    const writer = createWriter({ sink: ctx.sink, directSyncTimeoutMs: 10_000 });
    const res = await writer.createWithJob(ctx.db, widgets, { owner: "ann", title: "hello" });
    expect(res.sync).toBe("ok");
    const id = res.changes[0]!.id;
    const jobs = await jobsFor(ctx, id);
    expect(jobs).toHaveLength(1);
    expect(jobs[0]).toMatchObject({ name: "sync_widget", tag: "live", priority: 1 });
    expect(jobs[0]!.delay).toBeCloseTo(60, 0);
    const doc = await ctx.sink.client.get<{ title: string; tether: { version: number } }>({ index: ctx.sink.indexName("widgets"), id });
    expect(doc._version).toBe(Number((res.row as { version: string }).version));
    expect(doc._source?.title).toBe("hello");
  });

  it("re-reads a write's rows through the collection's load before the direct sync, leaving a row load does not return to the drainer", async () => {
    const loads: string[][] = [];
    // A document built from more than the row (here a computed column; in an app, a join).
    const loud = defineCollection<WidgetRow & { shout: string }>({
      name: "widget",
      table: "widget",
      index: "widgets",
      deletedColumn: "deleted_at",
      load: async (db, ids) => {
        loads.push([...ids]);
        return (await sql<WidgetRow & { shout: string }>`
          SELECT *, upper(title) AS shout FROM widget WHERE id = ANY(${[...ids]}::bigint[]) AND owner <> 'hidden'`.execute(db)).rows;
      },
      toDocument: (r) => ({ owner: r.owner, title: r.shout, body: r.body }),
    });
    const writer = createWriter({ sink: ctx.sink, directSyncTimeoutMs: 10_000 });
    const res = await writer.writeWithJobs(ctx.db, loud, async (trx) => {
      const rows = await trx.insertInto("widget").values([{ owner: "loud", title: "quiet" }, { owner: "hidden", title: "unseen" }]).returningAll().execute();
      return rows.map((row) => ({ id: String(row.id), row: { ...(row as WidgetRow), shout: "" } }));
    });
    const [shown, hidden] = res.changes;
    expect(loads).toEqual([[shown!.id, hidden!.id]]);
    expect(res.sync).toBe("ok");
    expect(shown!.row).toMatchObject({ title: "quiet", shout: "QUIET" });
    const states = await ctx.sink.fetchStates("widgets", [shown!.id, hidden!.id]);
    expect(states.get(shown!.id)).toMatchObject({ version: 1, deleted: false });
    expect(states.has(hidden!.id)).toBe(false);
    expect(await ctx.sink.readDocument("widgets", shown!.id)).toMatchObject({ title: "QUIET" });
    expect(await jobsFor(ctx, shown!.id)).toHaveLength(1);
    expect(await jobsFor(ctx, hidden!.id)).toHaveLength(1);
  });

  it("writes each row and its job in one statement, alone (no BEGIN, no COMMIT): create, update, soft delete and hard delete", async () => {
    const statements: string[] = [];
    const pool = new pg.Pool({ connectionString: ctx.databaseUrl, max: 1 });
    const db = new Kysely<any>({ dialect: new PostgresDialect({ pool }), log: (e) => void (e.level === "query" && statements.push(e.query.sql)) });
    try {
      const writer = createWriter({});
      // The writer reads once per collection whether the table's own ids are inside the id rule (an identity from 1): not part of any later write.
      const warm = (await writer.createWithJob(db, widgets, { owner: "one", title: "warm-up" })).changes[0]!.id;
      const calls: [string, () => Promise<unknown>][] = [];
      let id = "";
      let softVersion = 0;
      calls.push(["create", async () => (id = (await writer.createWithJob(db, widgets, { owner: "one", title: "statement" })).changes[0]!.id)]);
      calls.push(["update", () => writer.updateWithJob(db, widgets, id, { title: "edited" })]);
      calls.push(["soft delete", async () => (softVersion = Number(((await writer.deleteWithJob(db, widgets, id)).row as { version: string }).version))]);
      calls.push(["hard delete", () => writer.deleteWithJob(db, widgets, id, { hard: true })]);
      const shape = (q: string) => (/^(begin|commit|rollback)$/i.test(q) ? q.toLowerCase() : /"?widget"?/.test(q) && /tether\.(job|enqueue_row)\b/.test(q) ? "row+job" : q);
      for (const [what, call] of calls) {
        statements.length = 0;
        await call();
        expect(statements.map(shape), what).toEqual(["row+job"]);
      }
      const jobs = await sql<{ version: string | null }>`SELECT kwargs->>'version' AS version FROM tether.job WHERE kwargs->>'id' = ${id} ORDER BY id`.execute(ctx.db);
      // The hard delete's tombstone: the next version after the soft delete's (one session, nothing in between).
      expect(jobs.rows.map((j) => j.version)).toEqual([null, null, null, String(softVersion + 1)]);

      // In the caller's transaction: the same one statement, and the flag reset for the caller's own statements after it.
      statements.length = 0;
      await db.transaction().execute((trx) => writer.updateWithJob(trx, widgets, warm, { title: "in a transaction" }));
      expect(statements.map(shape)).toEqual(["begin", "row+job", expect.stringContaining("set_config"), "commit"]);
    } finally {
      await db.destroy();
    }
  });

  it("checks an id a default generated after the statement, in a transaction, and rolls both back when the id is outside the id rule", async () => {
    await sql`CREATE TABLE gadget (id text PRIMARY KEY DEFAULT '', title text NOT NULL, version bigint NOT NULL DEFAULT 1)`.execute(ctx.db);
    const gadgets = defineCollection<{ id: string; title: string; version: string }>({ name: "gadget", table: "gadget", index: "gadgets", toDocument: (r) => ({ title: r.title }) });
    const statements: string[] = [];
    const pool = new pg.Pool({ connectionString: ctx.databaseUrl, max: 1 });
    const db = new Kysely<any>({ dialect: new PostgresDialect({ pool }), log: (e) => void (e.level === "query" && statements.push(e.query.sql)) });
    try {
      const writer = createWriter({});
      await expect(writer.createWithJob(db, gadgets, { title: "no id" })).rejects.toThrow(ValidationError);
      expect(statements.filter((q) => /^(begin|commit|rollback)$/i.test(q)).map((q) => q.toLowerCase())).toEqual(["begin", "rollback"]);
      const left = await sql<{ rows: string; jobs: string }>`
        SELECT (SELECT count(*) FROM gadget)::text AS rows, (SELECT count(*) FROM tether.job WHERE name = ${gadgets.jobName})::text AS jobs`.execute(ctx.db);
      expect(left.rows[0]).toEqual({ rows: "0", jobs: "0" });
      // An id the call names is checked before the statement, which then runs alone.
      statements.length = 0;
      await writer.createWithJob(db, gadgets, { id: "g-1", title: "named" });
      expect(statements.filter((q) => /^(begin|commit|rollback)$/i.test(q))).toEqual([]);
    } finally {
      await db.destroy();
    }
  });

  it("sends the direct syncs of concurrent writes together while a bulk is in flight, each write told its own outcome", async () => {
    const proxy = await startFaultProxy({ target: ctx.downstreamUrl });
    try {
      const writer = createWriter({ sink: ctx.sinkAt(proxy.url), directSyncTimeoutMs: 10_000 });
      proxy.resetStats();
      const n = 60;
      const results = await Promise.all(Array.from({ length: n }, (_, i) => writer.createWithJob(ctx.db, widgets, { owner: "batch", title: `concurrent ${i}` })));
      expect(results.map((r) => r.sync)).toEqual(results.map(() => "ok"));
      // Fewer requests than writes: the ones that arrived during a bulk rode the next one.
      expect(proxy.stats.requests).toBeGreaterThan(0);
      expect(proxy.stats.requests).toBeLessThan(n);
      const ids = results.map((r) => r.changes[0]!.id);
      const states = await ctx.sink.fetchStates("widgets", ids);
      expect(results.filter((r) => states.get(r.changes[0]!.id)?.version !== Number((r.row as { version: string }).version))).toEqual([]);
      // A write alone is not held back for company: it leaves at once, in a request of its own.
      proxy.resetStats();
      expect((await writer.createWithJob(ctx.db, widgets, { owner: "batch", title: "alone" })).sync).toBe("ok");
      expect(proxy.stats.requests).toBe(1);
    } finally {
      await proxy.close();
    }
  });

  it("leaves neither row nor job when the transaction fails after the domain insert", async () => {
    const writer = createWriter({ sink: ctx.sink });
    const before = await ctx.jobCount();
    await expect(
      writer.writeWithJobs(ctx.db, widgets, async (trx) => {
        await trx.insertInto("widget").values({ owner: "atomic", title: "x" }).execute();
        throw new Error("boom after insert");
      }),
    ).rejects.toThrow("boom after insert");
    // A failure inside the job insert itself (check constraint) rolls the domain row back too.
    await expect(writer.createWithJob(ctx.db, widgets, { owner: "atomic", title: "y" }, { tag: "" })).rejects.toThrow(/tag/);
    const rows = await sql<{ n: string }>`SELECT count(*) AS n FROM widget WHERE owner = 'atomic'`.execute(ctx.db);
    expect(Number(rows.rows[0]!.n)).toBe(0);
    expect(await ctx.jobCount()).toBe(before);
  });

  it("rolls back the domain row when the job insert fails inside the same transaction", async () => {
    const writer = createWriter({ sink: ctx.sink });
    await sql`ALTER TABLE tether.job ADD CONSTRAINT no_doomed CHECK (kwargs->>'id' IS NOT NULL AND tag <> 'doomed')`.execute(ctx.db);
    try {
      await expect(writer.createWithJob(ctx.db, widgets, { owner: "doomed-owner", title: "z" }, { tag: "doomed" })).rejects.toThrow();
      const rows = await sql<{ n: string }>`SELECT count(*) AS n FROM widget WHERE owner = 'doomed-owner'`.execute(ctx.db);
      expect(Number(rows.rows[0]!.n)).toBe(0);
    } finally {
      await sql`ALTER TABLE tether.job DROP CONSTRAINT no_doomed`.execute(ctx.db);
    }
  });

  it("bumps the version in the writing transaction on update and soft delete", async () => {
    const writer = createWriter({ sink: ctx.sink });
    const { changes } = await writer.createWithJob(ctx.db, widgets, { owner: "bob", title: "v1" });
    const id = changes[0]!.id;
    const versionOf = (r: { row: unknown }) => Number((r.row as { version: string }).version);
    const created = versionOf({ row: changes[0]!.row });
    const upd = await writer.updateWithJob(ctx.db, widgets, id, { title: "v2" });
    expect(versionOf(upd)).toBeGreaterThan(created);
    const del = await writer.deleteWithJob(ctx.db, widgets, id);
    expect(versionOf(del)).toBeGreaterThan(versionOf(upd));
    expect(await jobsFor(ctx, id)).toHaveLength(3);
    const doc = await ctx.sink.client.get<{ tether: { deleted: boolean } }>({ index: ctx.sink.indexName("widgets"), id });
    expect(doc._version).toBe(versionOf(del));
    expect(doc._source?.tether.deleted).toBe(true);
    await expect(writer.updateWithJob(ctx.db, widgets, id, { title: "after delete" })).rejects.toMatchObject({ code: "E_NOT_FOUND" });
  });

  it("makes the jobs of concurrent failed syncs due together, each write answered after its own job is due", async () => {
    const expedites: string[] = [];
    const pool = new pg.Pool({ connectionString: ctx.databaseUrl, max: 4 });
    const db = new Kysely<any>({ dialect: new PostgresDialect({ pool }), log: (e) => void (e.level === "query" && /UPDATE tether\.job SET scheduled_at = now\(\)/.test(e.query.sql) && expedites.push(e.query.sql)) });
    try {
      const writer = createWriter({ sink: ctx.sinkAt("http://127.0.0.1:1"), breaker: false });
      const n = 40;
      const results = await Promise.all(
        Array.from({ length: n }, async (_, i) => {
          const res = await writer.createWithJob(db, widgets, { owner: "expedite", title: `failed ${i}` });
          // Read as the write returns: its job no longer waits out the grace period.
          const due = await sql<{ due: boolean }>`SELECT scheduled_at <= now() AS due FROM tether.job WHERE id = ${res.jobIds[0]!}::bigint`.execute(ctx.db);
          return { sync: res.sync, due: due.rows[0]?.due };
        }),
      );
      expect(results).toEqual(results.map(() => ({ sync: "error", due: true })));
      // Fewer statements than writes: the failures that arrived while one ran rode the next.
      expect(expedites.length).toBeGreaterThan(0);
      expect(expedites.length).toBeLessThan(n);
    } finally {
      await db.destroy();
    }
  });

  it("swallows a refused direct sync: the caller gets its row, the job stays", async () => {
    const writer = createWriter({ sink: ctx.sinkAt("http://127.0.0.1:1") });
    const res = await writer.createWithJob(ctx.db, widgets, { owner: "carol", title: "offline" });
    expect(res.sync).toBe("error");
    expect(await jobsFor(ctx, res.changes[0]!.id)).toHaveLength(1);
  });

  it("gives up on a hanging Elasticsearch at the direct-sync timeout", async () => {
    const sockets: net.Socket[] = [];
    const hole = net.createServer((s) => sockets.push(s));
    await new Promise<void>((r) => hole.listen(0, "127.0.0.1", r));
    const port = (hole.address() as net.AddressInfo).port;
    try {
      const writer = createWriter({ sink: ctx.sinkAt(`http://127.0.0.1:${port}`), directSyncTimeoutMs: 200 });
      // The hole never answers: the write can only come back through the timeout (the figure is the benchmarks').
      const res = await writer.createWithJob(ctx.db, widgets, { owner: "dave", title: "hang" });
      expect(res.sync).toBe("timeout");
      expect(await jobsFor(ctx, res.changes[0]!.id)).toHaveLength(1);
    } finally {
      for (const s of sockets) s.destroy();
      hole.close();
    }
  });

  it("defers the direct sync when the caller owns the transaction", async () => {
    const writer = createWriter({ sink: ctx.sink, directSyncTimeoutMs: 10_000 });
    const res = await ctx.db.transaction().execute((trx) => writer.createWithJob(trx, widgets, { owner: "erin", title: "mine" }));
    expect(res.sync).toBe("deferred");
    expect(await writer.syncNow(widgets, res.changes)).toBe("ok");
  });

  it("rejects patches of tether-managed columns with an error naming the field", async () => {
    const writer = createWriter({ sink: ctx.sink });
    expect(() => writer.updateWithJob(ctx.db, widgets, "1", { version: 99 })).toThrow(/version/);
  });
});
