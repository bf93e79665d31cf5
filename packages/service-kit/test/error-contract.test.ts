import { Writable } from "node:stream";
import Fastify, { type FastifyBaseLogger, type FastifyInstance } from "fastify";
import { sql } from "kysely";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTestContext, type TestContext } from "@tether/testkit";
import { createLogger, ERROR_CODES, errorContract, errorContractServerOptions, HttpError } from "../src/index.js";

function capture() {
  const lines: Record<string, unknown>[] = [];
  const destination = new Writable({
    write(chunk: Buffer, _enc, cb) {
      for (const l of chunk.toString("utf8").split("\n").filter(Boolean)) lines.push(JSON.parse(l) as Record<string, unknown>);
      cb();
    },
  });
  return { lines, logger: createLogger({ level: "info", destination }) };
}

describe("the error contract plugin", () => {
  let ctx: TestContext;
  let app: FastifyInstance;
  const log = capture();
  beforeAll(async () => {
    ctx = await createTestContext();
    app = Fastify({ loggerInstance: log.logger as FastifyBaseLogger, ...errorContractServerOptions() });
    await app.register(errorContract);
    // A route with no edge rule for its input: Postgres refuses it (class 22).
    app.post<{ Body: { when: string } }>("/gap", async (request) => {
      const r = await sql<{ t: string }>`SELECT ${request.body.when}::timestamptz AS t`.execute(ctx.db);
      return r.rows[0];
    });
    app.get<{ Querystring: { n?: string } }>("/gap-query", async (request) => (await sql`SELECT ${request.query.n ?? ""}::int AS n`.execute(ctx.db)).rows[0]);
    app.get("/boom", async () => {
      throw new Error("secret internals: postgres://u:pw@10.0.0.7:5432/db");
    });
    // A plugin mounted under a prefix that registers the contract itself (as an admin console would).
    await app.register(
      async (child) => {
        await child.register(errorContract);
        child.get("/things/:id", async () => ({ ok: true }));
        child.delete("/things/:id", async () => {
          throw new HttpError("forbidden", "the operator role is required");
        });
      },
      { prefix: "/console" },
    );
    await app.ready();
  });
  afterAll(async () => {
    await app.close();
    await ctx.close();
  });

  it("answer a Postgres data exception (class 22) with a 400 naming the input, and log it as a validation gap", async () => {
    const res = await app.inject({ method: "POST", url: "/gap", payload: { when: "0000-01-01" } });
    expect(res.statusCode).toBe(400);
    expect(res.json()).toMatchObject({ error: "validation", field: "body" });
    const q = await app.inject({ method: "GET", url: "/gap-query?n=99999999999" });
    expect(q.statusCode).toBe(400);
    expect(q.json()).toMatchObject({ error: "validation", field: "query" });
    const gaps = log.lines.filter((l) => typeof l.msg === "string" && l.msg.startsWith("validation gap"));
    expect(gaps.map((g) => g.route)).toEqual(["/gap", "/gap-query"]);
  });

  it("answer an unexpected error with a 500 that names nothing internal", async () => {
    const res = await app.inject({ method: "GET", url: "/boom" });
    expect(res.statusCode).toBe(500);
    expect(Object.keys(res.json()).sort()).toEqual(["error", "message"]);
    expect(res.json().error).toBe("internal");
    expect(res.body).not.toMatch(/10\.0\.0\.7|pw|secret/);
  });

  it("serve a prefixed plugin with the same contract: its 404, its 405 with Allow, its HttpErrors", async () => {
    const gone = await app.inject({ method: "GET", url: "/console/nothing" });
    expect(gone.statusCode).toBe(404);
    expect(gone.json()).toMatchObject({ error: "not_found" });
    const put = await app.inject({ method: "PUT", url: "/console/things/7" });
    expect(put.statusCode).toBe(405);
    expect(put.headers.allow).toBe("DELETE, GET, HEAD");
    const del = await app.inject({ method: "DELETE", url: "/console/things/7" });
    expect(del.statusCode).toBe(403);
    expect(del.json()).toEqual({ error: "forbidden", message: "the operator role is required" });
  });

  it("serve the contract from a prefixed plugin alone, in an app that does not register it", async () => {
    const host = Fastify();
    await host.register(
      async (child) => {
        await child.register(errorContract);
        child.post("/reindex", { schema: { body: { type: "object", required: ["scope"], properties: { scope: { type: "string" } } } } }, async () => ({ ok: true }));
      },
      { prefix: "/admin" },
    );
    try {
      const bad = await host.inject({ method: "POST", url: "/admin/reindex", payload: { scope: "a\u0000" } });
      expect(bad.json()).toMatchObject({ error: "validation", field: "scope" });
      const wrongMethod = await host.inject({ method: "GET", url: "/admin/reindex" });
      expect(wrongMethod.statusCode).toBe(405);
      expect(wrongMethod.headers.allow).toBe("POST");
      const text = await host.inject({ method: "POST", url: "/admin/reindex", headers: { "content-type": "text/plain" }, payload: "{}" });
      expect(text.json()).toMatchObject({ error: "unsupported_media_type" });
    } finally {
      await host.close();
    }
  });

  it("document a status for every code it answers", () => {
    for (const [code, status] of Object.entries(ERROR_CODES)) expect(new HttpError(code as keyof typeof ERROR_CODES, "m").statusCode, code).toBe(status);
  });
});
