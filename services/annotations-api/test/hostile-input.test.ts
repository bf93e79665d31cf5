import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { sql } from "kysely";
import { admin, createApiContext, type ApiContext } from "./support/api-context.js";

/** Every error answer has exactly this shape: `{ error, field?, message }`. */
function expectContract(body: unknown, error: string, field?: string): void {
  expect(Object.keys(body as object).sort()).toEqual(field === undefined ? ["error", "message"] : ["error", "field", "message"]);
  expect(body).toMatchObject({ error, ...(field === undefined ? {} : { field }) });
  expect(typeof (body as { message: unknown }).message).toBe("string");
}

describe("hostile input to the reference API", () => {
  let ctx: ApiContext;
  let existing: string;
  beforeAll(async () => {
    ctx = await createApiContext();
    const r = await sql<{ id: string }>`INSERT INTO annotation (userid, groupid, target_uri) VALUES ('acct:h', 'g', 'u') RETURNING id`.execute(ctx.db);
    existing = String(r.rows[0]!.id);
  });
  afterAll(() => ctx.close());
  beforeEach(async () => {
    await sql`DELETE FROM tether.job`.execute(ctx.db);
  });

  const counts = async () => (await sql<{ rows: string; jobs: string }>`SELECT (SELECT count(*) FROM annotation) AS rows, (SELECT count(*) FROM tether.job) AS jobs`.execute(ctx.db)).rows[0];
  const reindex = (payload: unknown) => ctx.app.inject({ method: "POST", url: "/admin/reindex", headers: admin, payload: payload as object });
  const raw = (method: "POST" | "PATCH", url: string, body: string | Buffer, contentType = "application/json", headers: Record<string, string> = {}) =>
    ctx.app.inject({ method, url, headers: { "content-type": contentType, ...headers }, payload: body });

  describe("re-index input Postgres would refuse answers 400, not 500", () => {
    it("refuse a NUL character in value or tag, naming the field", async () => {
      for (const [payload, field] of [
        [{ scope: "user", value: "a\u0000" }, "value"],
        [{ scope: "all", tag: "reindex\u0000x" }, "tag"],
      ] as const) {
        const res = await reindex(payload);
        expect(res.statusCode, JSON.stringify(payload)).toBe(400);
        expectContract(res.json(), "validation", field);
      }
      expect((await counts())!.jobs).toBe("0");
    });

    it("refuse years outside 0001..9999 and impossible calendar dates instead of reading 2024-02-30 as March 1", async () => {
      for (const [payload, field] of [
        [{ scope: "updated", from: "0000-01-01" }, "from"],
        [{ scope: "updated", from: "0000-12-31T23:00:00Z" }, "from"],
        [{ scope: "updated", from: "0001-01-01T00:30:00+01:00" }, "from"],
        [{ scope: "updated", to: "2024-02-30" }, "to"],
        [{ scope: "updated", from: "2023-02-29" }, "from"],
        [{ scope: "updated", from: "2026-04-31T00:00:00Z" }, "from"],
        [{ scope: "updated", from: "2026-13-01" }, "from"],
        [{ scope: "updated", from: "2026-01-01T24:00:00Z" }, "from"],
        [{ scope: "updated", from: "2026-01-01T10:60:00Z" }, "from"],
        [{ scope: "updated", from: "2026-01-01T10:00:00+16:00" }, "from"],
      ] as const) {
        const res = await reindex(payload);
        expect(res.statusCode, JSON.stringify(payload)).toBe(400);
        expectContract(res.json(), "validation", field);
      }
      expect((await counts())!.jobs).toBe("0");
    });

    it("accept the edges of the range and leap days", async () => {
      for (const payload of [
        { scope: "updated", from: "0001-01-01", to: "9999-12-31T23:59:59.999Z" },
        { scope: "updated", from: "2024-02-29", to: "2024-03-01" },
        { scope: "updated", from: "2000-02-29T23:59:59+14:00" },
      ]) {
        const res = await reindex(payload);
        expect(res.statusCode, JSON.stringify(payload)).toBe(200);
      }
    });
  });

  describe("text that is not valid Unicode is refused, never changed", () => {
    it("refuse a lone surrogate in a create, a patch and a re-index value, naming the field", async () => {
      const before = await counts();
      const create = await ctx.app.inject({ method: "POST", url: "/api/annotations", payload: { user: "acct:s", uri: "u", text: "x\ud800y" } });
      expect(create.statusCode).toBe(400);
      expectContract(create.json(), "validation", "text");
      const tag = await ctx.app.inject({ method: "POST", url: "/api/annotations", payload: { user: "acct:s", uri: "u", tags: ["ok", "\udc00"] } });
      expectContract(tag.json(), "validation", "tags.1");
      const patch = await ctx.app.inject({ method: "PATCH", url: `/api/annotations/${existing}`, payload: { text: "a\udbffb" } });
      expect(patch.statusCode).toBe(400);
      expectContract(patch.json(), "validation", "text");
      const value = await reindex({ scope: "user", value: "acct:\ud83d" });
      expectContract(value.json(), "validation", "value");
      expect(await counts()).toEqual(before);
    });

    it("refuse a body whose bytes are not UTF-8", async () => {
      const before = await counts();
      const body = Buffer.concat([Buffer.from('{"user":"acct:b","uri":"u","text":"x'), Buffer.from([0xff, 0xfe]), Buffer.from('y"}')]);
      const res = await raw("POST", "/api/annotations", body);
      expect(res.statusCode).toBe(400);
      expectContract(res.json(), "invalid_json", "body");
      // An encoded surrogate half (CESU-8) is not UTF-8 either.
      const cesu = Buffer.concat([Buffer.from('{"user":"acct:b","uri":"u","text":"'), Buffer.from([0xed, 0xa0, 0x80]), Buffer.from('"}')]);
      expectContract((await raw("POST", "/api/annotations", cesu)).json(), "invalid_json", "body");
      expect(await counts()).toEqual(before);
    });

    it("store valid astral characters unchanged", async () => {
      const res = await ctx.app.inject({ method: "POST", url: "/api/annotations", payload: { user: "acct:emoji", uri: "u", text: "a\ud83d\ude00b" } });
      expect(res.statusCode).toBe(201);
      const row = await sql<{ text: string }>`SELECT text FROM annotation WHERE id = ${res.json().id}`.execute(ctx.db);
      expect(row.rows[0]!.text).toBe("a😀b");
    });

    it("refuse NUL and malformed percent-encoding in query strings, naming the parameter", async () => {
      for (const [url, field] of [
        ["/api/search?q=a%00b", "q"],
        ["/api/search?user=%FF", "user"],
        ["/api/search?uri=%ED%A0%80", "uri"],
      ] as const) {
        const res = await ctx.app.inject({ method: "GET", url });
        expect(res.statusCode, url).toBe(400);
        expectContract(res.json(), "validation", field);
      }
    });
  });

  describe("one id rule for paths and re-index lists", () => {
    it("refuse the same ids in a path and in a re-index list, naming the list item", async () => {
      for (const bad of ["0", "-5", "abc", "1.5", "1e3", "+7", "9223372036854775808", "99999999999999999999", " 1"]) {
        const path = await ctx.app.inject({ method: "GET", url: `/api/annotations/${encodeURIComponent(bad)}` });
        expect(path.statusCode, `path ${bad}`).toBe(400);
        expectContract(path.json(), "validation", "id");
        const list = await reindex({ scope: "ids", ids: [existing, bad] });
        expect(list.statusCode, `ids ${bad}`).toBe(400);
        expectContract(list.json(), "validation", "ids.1");
      }
      expect((await counts())!.jobs).toBe("0");
    });

    it("accept the same ids in both places, as strings or JSON integers", async () => {
      for (const good of ["1", "007", "9223372036854775807"]) {
        expect([200, 404], `path ${good}`).toContain((await ctx.app.inject({ method: "GET", url: `/api/annotations/${good}` })).statusCode);
        expect((await reindex({ scope: "ids", ids: [good] })).statusCode, `ids ${good}`).toBe(200);
      }
      expect((await reindex({ scope: "ids", ids: [Number(existing), 9007199254740991] })).json()).toMatchObject({ enqueued: 2 });
    });

    it("answer a numeric id with the id rule, not 'must be string', and never echo a rounded 2^63", async () => {
      const zero = await reindex({ scope: "ids", ids: [0] });
      expectContract(zero.json(), "validation", "ids.0");
      expect(zero.json().message).not.toMatch(/must be string/);
      const big = await raw("POST", "/admin/reindex", '{"scope":"ids","ids":[9223372036854775808]}', "application/json", admin);
      expect(big.statusCode).toBe(400);
      expectContract(big.json(), "validation", "ids.0");
      expect(big.json().message).toContain("9223372036854775808");
      expect(big.json().message).not.toContain("9223372036854776000");
      expect((await counts())!.jobs).toBe("0");
    });
  });

  describe("one error shape for every refusal", () => {
    it("answer 415 to a body sent as text/plain (or any other media type)", async () => {
      for (const type of ["text/plain", "application/x-www-form-urlencoded", "application/xml"]) {
        const res = await raw("POST", "/api/annotations", '{"user":"acct:t","uri":"u"}', type);
        expect(res.statusCode, type).toBe(415);
        expectContract(res.json(), "unsupported_media_type");
      }
    });

    it("answer 405 with Allow for a known path and a method it does not serve", async () => {
      const cases: [string, string, string][] = [
        ["PUT", `/api/annotations/${existing}`, "DELETE, GET, HEAD, PATCH"],
        ["DELETE", "/api/annotations", "POST"],
        ["POST", "/api/search?q=x", "GET, HEAD"],
        ["GET", "/admin/reindex", "POST"],
        ["DELETE", "/healthz", "GET, HEAD"],
      ];
      for (const [method, url, allow] of cases) {
        const res = await ctx.app.inject({ method: method as "PUT", url });
        expect(res.statusCode, `${method} ${url}`).toBe(405);
        expect(res.headers.allow).toBe(allow);
        expectContract(res.json(), "method_not_allowed");
      }
      const unknown = await ctx.app.inject({ method: "GET", url: "/api/nope" });
      expect(unknown.statusCode).toBe(404);
      expectContract(unknown.json(), "not_found");
    });

    it("refuse prototype pollution with the contract, naming the field, and write nothing", async () => {
      const before = await counts();
      for (const [body, field] of [
        ['{"user":"acct:p","uri":"u","__proto__":{"admin":true}}', "__proto__"],
        ['{"user":"acct:p","uri":"u","tags":[{"constructor":{"prototype":{"x":1}}}]}', "tags.0.constructor"],
      ] as const) {
        const res = await raw("POST", "/api/annotations", body);
        expect(res.statusCode, body).toBe(400);
        expectContract(res.json(), "validation", field);
      }
      expect(({} as Record<string, unknown>).admin).toBeUndefined();
      expect(await counts()).toEqual(before);
    });

    it("answer 413 and malformed JSON with the contract", async () => {
      const big = await ctx.app.inject({ method: "POST", url: "/api/annotations", payload: { user: "acct:b", uri: "u", text: "x".repeat(70_000) } });
      expect(big.statusCode).toBe(413);
      expectContract(big.json(), "payload_too_large");
      const broken = await raw("POST", "/api/annotations", '{"user": "acct:b", "uri": ');
      expect(broken.statusCode).toBe(400);
      expectContract(broken.json(), "invalid_json", "body");
    });
  });
});
