import { once } from "node:events";
import net from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { FastifyInstance } from "fastify";
import { sql } from "kysely";
import { annotations } from "@tether/annotations";
import { Drainer } from "@tether/core";
import { createApiContext, type ApiContext } from "./support/api-context.js";

/** Accepts TCP connections and never answers a byte. */
async function blackHole(): Promise<{ url: string; open: () => number; accepted: () => number; close: () => Promise<void> }> {
  const sockets = new Set<net.Socket>();
  let accepted = 0;
  const server = net.createServer((socket) => {
    accepted += 1;
    sockets.add(socket);
    socket.on("close", () => sockets.delete(socket));
    socket.on("error", () => undefined);
  });
  server.listen(0, "127.0.0.1");
  await once(server, "listening");
  const { port } = server.address() as net.AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    open: () => sockets.size,
    accepted: () => accepted,
    async close() {
      for (const s of sockets) s.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

interface View {
  id: string;
  text: string;
  version: number;
}

describe("annotations end to end through HTTP, with Elasticsearch up, refusing and hanging", () => {
  let ctx: ApiContext;
  let hole: Awaited<ReturnType<typeof blackHole>>;
  const apps: FastifyInstance[] = [];
  let drainer: Drainer | undefined;

  beforeAll(async () => {
    ctx = await createApiContext({ graceMs: 0 });
    hole = await blackHole();
  });
  afterAll(async () => {
    await drainer?.stop();
    for (const app of apps) await app.close();
    await hole.close();
    await ctx.close();
  });

  async function call(app: FastifyInstance, method: "POST" | "PATCH" | "DELETE", url: string, payload?: object) {
    const res = await app.inject({ method, url, ...(payload ? { payload } : {}) });
    expect(res.statusCode, `${method} ${url}: ${res.body}`).toBe(method === "POST" ? 201 : method === "PATCH" ? 200 : 204);
    return method === "DELETE" ? undefined : (res.json() as View);
  }
  async function searchIds(qs: string): Promise<string[]> {
    await ctx.refresh();
    const res = await ctx.app.inject({ method: "GET", url: `/api/search?${qs}` });
    expect(res.statusCode, res.body).toBe(200);
    return (res.json().rows as View[]).map((r) => r.id).sort();
  }
  /** The row's version in Postgres (a deleted annotation's is its tombstone's). */
  async function rowVersion(id: string): Promise<number> {
    return Number((await sql<{ version: string }>`SELECT version FROM annotation WHERE id = ${id}`.execute(ctx.db)).rows[0]!.version);
  }

  async function docVersion(id: string): Promise<{ version: number; deleted: boolean } | undefined> {
    const states = await ctx.sink.fetchStates(annotations.index, [id]);
    return states.get(id);
  }

  const user = "acct:e2e";
  let kept: View, removed: View, editedOffline: View, deletedOffline: View, createdRefused: View, createdHanging: View, deletedHanging: View;

  it("with Elasticsearch reachable, show creates and edits in search at once and never a delete", async () => {
    kept = (await call(ctx.app, "POST", "/api/annotations", { user, uri: "https://e2e/1", text: "first draft" }))!;
    removed = (await call(ctx.app, "POST", "/api/annotations", { user, uri: "https://e2e/2", text: "short lived" }))!;
    editedOffline = (await call(ctx.app, "POST", "/api/annotations", { user, uri: "https://e2e/3", text: "original wording" }))!;
    deletedOffline = (await call(ctx.app, "POST", "/api/annotations", { user, uri: "https://e2e/4", text: "doomed" }))!;
    kept = (await call(ctx.app, "PATCH", `/api/annotations/${kept.id}`, { text: "final draft" }))!;
    await call(ctx.app, "DELETE", `/api/annotations/${removed.id}`);

    expect(await searchIds(`user=${user}`)).toEqual([kept.id, editedOffline.id, deletedOffline.id].sort());
    expect(await searchIds(`user=${user}&q=final`)).toEqual([kept.id]);
    expect(await searchIds(`user=${user}&q=draft`)).toEqual([kept.id]);
    expect(await searchIds(`user=${user}&q=short`)).toEqual([]);
    expect(await docVersion(removed.id)).toEqual({ version: await rowVersion(removed.id), deleted: true });
  });

  it("with Elasticsearch refusing connections, still answer every write, leaving search stale until the drainer runs", async () => {
    const app = await ctx.build({ sink: ctx.sinkAt("http://127.0.0.1:1"), searchSink: ctx.sink, graceMs: 0 });
    apps.push(app);
    createdRefused = (await call(app, "POST", "/api/annotations", { user, uri: "https://e2e/5", text: "written while refused" }))!;
    editedOffline = (await call(app, "PATCH", `/api/annotations/${editedOffline.id}`, { text: "revised wording" }))!;
    await call(app, "DELETE", `/api/annotations/${deletedOffline.id}`);

    // Missing: the new annotation never reached the index.
    expect(await searchIds(`user=${user}&q=refused`)).toEqual([]);
    // Stale: the index still matches the old text and not the new one.
    expect(await searchIds(`user=${user}&q=original`)).toEqual([editedOffline.id]);
    expect(await searchIds(`user=${user}&q=revised`)).toEqual([]);
    // The deleted one is still live in the index, but search never shows it: Postgres has it deleted.
    expect(await docVersion(deletedOffline.id)).toMatchObject({ version: deletedOffline.version, deleted: false });
    expect(await searchIds(`user=${user}`)).toEqual([kept.id, editedOffline.id].sort());
  });

  it("with Elasticsearch accepting connections and never answering, answer every write before it does", async () => {
    const app = await ctx.build({ sink: ctx.sinkAt(hole.url), searchSink: ctx.sink, graceMs: 0, directSyncTimeoutMs: 300 });
    apps.push(app);
    createdHanging = (await call(app, "POST", "/api/annotations", { user, uri: "https://e2e/6", text: "written into the void" }))!;
    deletedHanging = (await call(app, "POST", "/api/annotations", { user, uri: "https://e2e/7", text: "gone into the void" }))!;
    await call(app, "DELETE", `/api/annotations/${deletedHanging.id}`);
    // The writes were answered although the black hole never answered one byte.
    expect(hole.accepted()).toBeGreaterThan(0);
    const metrics = await app.inject({ method: "GET", url: "/metrics" });
    expect(metrics.body).toMatch(/^tether_direct_sync_total\{outcome="timeout".*\} [1-9]/m);

    expect(await searchIds(`user=${user}&q=void`)).toEqual([]);
    const row = await sql<{ deleted_at: Date | null }>`SELECT deleted_at FROM annotation WHERE id = ${deletedHanging.id}`.execute(ctx.db);
    expect(row.rows[0]?.deleted_at).not.toBeNull();
  });

  it("after a drainer pass against the real Elasticsearch, show every committed write correctly in search", async () => {
    const due = await sql<{ n: string }>`SELECT count(*) AS n FROM tether.job WHERE scheduled_at <= now()`.execute(ctx.db);
    expect(Number(due.rows[0]!.n)).toBeGreaterThanOrEqual(6);
    drainer = new Drainer({ db: ctx.db, sink: ctx.sink, collections: [annotations] });
    const result = await drainer.drainUntilEmpty();
    expect(result.error).toBeUndefined();
    expect(result).toMatchObject({ parked: 0, retried: 0 });
    expect(result.repaired + result.up_to_date + result.deleted_downstream).toBe(result.claimed);
    // Five annotations were written during the outages; all 8 jobs of theirs (their earlier jobs
    // included, confirmed together) are repaired, the other 4 are found up to date.
    expect(result.repaired + result.deleted_downstream).toBe(8);
    expect(result.up_to_date).toBe(4);
    const left = await sql<{ n: string }>`SELECT count(*) AS n FROM tether.job`.execute(ctx.db);
    expect(Number(left.rows[0]!.n)).toBe(0);

    expect(await searchIds(`user=${user}&q=refused`)).toEqual([createdRefused.id]);
    expect(await searchIds(`user=${user}&q=void`)).toEqual([createdHanging.id]);
    expect(await searchIds(`user=${user}&q=revised`)).toEqual([editedOffline.id]);
    expect(await searchIds(`user=${user}&q=original`)).toEqual([]);
    expect(await searchIds(`user=${user}`)).toEqual([kept.id, editedOffline.id, createdRefused.id, createdHanging.id].sort());
    expect(await docVersion(deletedOffline.id)).toEqual({ version: await rowVersion(deletedOffline.id), deleted: true });
    expect(await docVersion(deletedHanging.id)).toEqual({ version: await rowVersion(deletedHanging.id), deleted: true });
    expect(await docVersion(editedOffline.id)).toMatchObject({ version: editedOffline.version, deleted: false });
  });
});
