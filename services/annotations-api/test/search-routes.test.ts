import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { sql } from "kysely";
import { createApiContext, type ApiContext } from "./support/api-context.js";

interface Row {
  id: string;
  version: number;
  user: string;
  group: string;
  uri: string;
  text: string;
}

describe("GET /api/search", () => {
  let ctx: ApiContext;
  const made: Row[] = [];
  beforeAll(async () => {
    ctx = await createApiContext();
    const seed = [
      { user: "acct:ann", group: "g1", uri: "https://example.com/1", text: "the quick brown fox" },
      { user: "acct:ann", group: "g2", uri: "https://example.com/2", text: "lazy dogs sleep" },
      { user: "acct:bob", group: "g1", uri: "https://example.com/1", text: "a quick reply" },
      { user: "acct:bob", group: "g1", uri: "https://example.com/3", text: "nothing to see" },
      { user: "acct:cat", group: "g2", uri: "https://example.com/1", text: "quick quick quick" },
    ];
    for (const s of seed) {
      const res = await ctx.app.inject({ method: "POST", url: "/api/annotations", payload: s });
      made.push(res.json());
    }
    await ctx.refresh();
  });
  afterAll(() => ctx.close());

  const search = async (qs: string) => {
    const res = await ctx.app.inject({ method: "GET", url: `/api/search${qs}` });
    return res;
  };
  const ids = async (qs: string) => {
    const res = await search(qs);
    expect(res.statusCode, res.body).toBe(200);
    return (res.json().rows as Row[]).map((r) => r.id);
  };
  const idsOf = (pred: (r: Row) => boolean) => made.filter(pred).map((r) => r.id).reverse();

  it("return every live annotation newest first when no filter is given", async () => {
    const res = await search("");
    expect(res.json().total).toBe(5);
    expect(await ids("")).toEqual(idsOf(() => true));
  });

  it("filter by uri, user and group, alone and combined", async () => {
    expect(await ids("?uri=https%3A%2F%2Fexample.com%2F1")).toEqual(idsOf((r) => r.uri === "https://example.com/1"));
    expect(await ids("?user=acct:ann")).toEqual(idsOf((r) => r.user === "acct:ann"));
    expect(await ids("?group=g1")).toEqual(idsOf((r) => r.group === "g1"));
    expect(await ids("?group=g1&user=acct:bob")).toEqual(idsOf((r) => r.group === "g1" && r.user === "acct:bob"));
    expect(await ids("?user=acct:nobody")).toEqual([]);
  });

  it("match text with q and combine it with filters", async () => {
    expect(new Set(await ids("?q=quick"))).toEqual(new Set(idsOf((r) => r.text.includes("quick"))));
    expect(await ids("?q=quick&group=g2")).toEqual(idsOf((r) => r.text.includes("quick") && r.group === "g2"));
  });

  it("return bodies from Postgres, honouring limit", async () => {
    const res = await search("?limit=2");
    const body = res.json();
    expect(body.total).toBe(5);
    expect(body.rows).toHaveLength(2);
    expect(body.rows[0]).toMatchObject({ id: made[4]!.id, user: "acct:cat", text: "quick quick quick", version: made[4]!.version });
  });

  it("never return an annotation soft-deleted in Postgres, even before its tombstone reaches the index", async () => {
    const victim = made[3]!;
    // Behind tether's back: the index still has the live document.
    await sql`UPDATE annotation SET deleted_at = now() WHERE id = ${victim.id}`.execute(ctx.db);
    try {
      expect(await ids("?user=acct:bob")).toEqual([made[2]!.id]);
      expect((await search("?user=acct:bob")).json().total).toBe(1);
    } finally {
      await sql`UPDATE annotation SET deleted_at = NULL WHERE id = ${victim.id}`.execute(ctx.db);
    }
  });

  it("drop annotations deleted through the API once the index is refreshed", async () => {
    const res = await ctx.app.inject({ method: "POST", url: "/api/annotations", payload: { user: "acct:gone", uri: "https://example.com/g" } });
    const id = res.json().id;
    await ctx.refresh();
    expect(await ids("?user=acct:gone")).toEqual([id]);
    expect((await ctx.app.inject({ method: "DELETE", url: `/api/annotations/${id}` })).statusCode).toBe(204);
    await ctx.refresh();
    expect(await ids("?user=acct:gone")).toEqual([]);
  });

  it("answer 400 naming the parameter for a bad limit or an unknown parameter", async () => {
    for (const [qs, field] of [
      ["?limit=0", "limit"],
      ["?limit=201", "limit"],
      ["?limit=ten", "limit"],
      ["?usr=acct:ann", "usr"],
      ["?user=", "user"],
      ["?user=a&user=b", "user"],
    ] as const) {
      const res = await search(qs);
      expect(res.statusCode, qs).toBe(400);
      expect(res.json(), qs).toMatchObject({ error: "validation", field });
    }
    expect((await search("?limit=200")).statusCode).toBe(200);
  });

  it("answer 503 when Elasticsearch is unreachable instead of an empty result", async () => {
    const app = await ctx.build({ searchSink: ctx.sinkAt("http://127.0.0.1:1") });
    try {
      const res = await app.inject({ method: "GET", url: "/api/search?user=acct:ann" });
      expect(res.statusCode).toBe(503);
      expect(res.json()).toMatchObject({ error: "search_unavailable" });
    } finally {
      await app.close();
    }
  });
});
