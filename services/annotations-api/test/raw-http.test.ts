import { connect } from "node:net";
import type { FastifyInstance } from "fastify";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { sql } from "kysely";
import { createApiContext, type ApiContext } from "./support/api-context.js";

/** Writes raw bytes to the server and resolves with everything it answers before closing. */
function rawRequest(port: number, bytes: string | Buffer): Promise<{ status: number; headers: string; body: string }> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, "127.0.0.1");
    const chunks: Buffer[] = [];
    socket.on("data", (d: Buffer) => chunks.push(d));
    socket.on("error", reject);
    socket.on("close", () => {
      const text = Buffer.concat(chunks).toString("utf8");
      const [head = "", body = ""] = text.split("\r\n\r\n");
      resolve({ status: Number(/^HTTP\/1\.1 (\d{3})/.exec(head)?.[1] ?? 0), headers: head, body });
    });
    socket.end(bytes);
  });
}

describe("requests Node's HTTP parser or Fastify refuse before a route runs", () => {
  let ctx: ApiContext;
  let app: FastifyInstance;
  let port: number;
  beforeAll(async () => {
    ctx = await createApiContext();
    app = ctx.app;
    await app.listen({ port: 0, host: "127.0.0.1" });
    port = (app.server.address() as { port: number }).port;
  });
  afterAll(() => ctx.close());

  const cases: [string, string, number, string][] = [
    ["an invalid header name", "GET /healthz HTTP/1.1\r\nHost: x\r\nBad Header: y\r\n\r\n", 400, "bad_request"],
    ["a NUL byte in a header value", "GET /healthz HTTP/1.1\r\nHost: x\r\nX-A: a\u0000b\r\n\r\n", 400, "bad_request"],
    ["Content-Length together with Transfer-Encoding", "POST /api/annotations HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 4\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n", 400, "bad_request"],
    ["two different Content-Lengths", "POST /api/annotations HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 2\r\nContent-Length: 3\r\n\r\n{}", 400, "bad_request"],
    ["a method Node does not know", "FROB /healthz HTTP/1.1\r\nHost: x\r\n\r\n", 400, "bad_request"],
    ["a method Node knows on a path that does not serve it", "PROPFIND /api/annotations HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n", 405, "method_not_allowed"],
    ["headers over Node's limit", `GET /healthz HTTP/1.1\r\nHost: x\r\nX-Big: ${"a".repeat(20_000)}\r\n\r\n`, 431, "headers_too_large"],
    ["a path with malformed percent-encoding", "GET /api/annotations/%E0%A4%A HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n", 400, "bad_request"],
    ["a path segment longer than the router accepts", `GET /api/users/${"u".repeat(3_073)} HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n`, 400, "bad_request"],
    ["a body declared longer than the limit", "POST /api/annotations HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 10000000\r\nConnection: close\r\n\r\n{}", 413, "payload_too_large"],
  ];

  for (const [what, bytes, status, error] of cases) {
    it(`answer ${what} with ${status} and the error contract's body`, async () => {
      const before = await sql<{ n: string }>`SELECT count(*) AS n FROM annotation`.execute(ctx.db);
      const res = await rawRequest(port, bytes);
      expect(res.status, res.headers).toBe(status);
      expect(res.headers).toMatch(/content-type: application\/json/i);
      const body = JSON.parse(res.body) as Record<string, unknown>;
      expect(Object.keys(body).filter((k) => k !== "field").sort()).toEqual(["error", "message"]);
      expect(body.error).toBe(error);
      // The limit the message names is the app's (a user id of 256 characters, percent-encoded), not Fastify's default.
      if (what.includes("longer than the router")) expect(body.message).toContain("(3072 characters)");
      const after = await sql<{ n: string }>`SELECT count(*) AS n FROM annotation`.execute(ctx.db);
      expect(after.rows[0]!.n).toBe(before.rows[0]!.n);
    });
  }
});
