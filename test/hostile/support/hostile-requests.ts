import fc from "fast-check";
import { encodeAny, hostileDate, hostileNumber, hostileString, hostileValue, pollution, RawJson, toJsonText } from "./hostile-values.js";

export type Method = "GET" | "HEAD" | "POST" | "PUT" | "PATCH" | "DELETE" | "OPTIONS";

/** One generated request, as bytes on the wire would carry it. */
export interface HostileRequest {
  method: Method;
  url: string;
  headers: Record<string, string>;
  payload?: string | Buffer;
  /** The JSON value sent, when the body is well-formed JSON (to compare against what a 2xx stored). */
  sent?: Record<string, unknown>;
}

/** A field: usually a valid value (so the other fields get exercised), else absent or hostile. */
const field = (valid: unknown) => fc.oneof({ weight: 3, arbitrary: fc.constant(valid) }, { weight: 2, arbitrary: hostileValue });

/** Extra unknown or polluting keys at the top of a body. */
const extras = fc.option(fc.dictionary(fc.oneof(hostileString, fc.constantFrom("__proto__", "constructor", "where", "id", "version")), hostileValue, { maxKeys: 2 }), { freq: 4 });

type Envelope = "json" | "text/plain" | "no-type" | "invalid-utf8" | "truncated" | "array" | "pollute" | "oversize";
const envelope: fc.Arbitrary<Envelope> = fc.oneof(
  { weight: 12, arbitrary: fc.constant("json" as const) },
  { weight: 1, arbitrary: fc.constantFrom<Envelope>("text/plain", "no-type", "invalid-utf8", "truncated", "array", "pollute", "oversize") },
);

/** Wraps a body object the way a hostile client might send it. */
function wrap(body: Record<string, unknown>, how: Envelope): Pick<HostileRequest, "headers" | "payload" | "sent"> {
  const json = { "content-type": "application/json" };
  const text = toJsonText(body);
  switch (how) {
    case "json":
      return { headers: json, payload: text, sent: body };
    case "text/plain":
      return { headers: { "content-type": "text/plain" }, payload: text };
    case "no-type":
      return { headers: {}, payload: text };
    case "invalid-utf8":
      return { headers: json, payload: Buffer.concat([Buffer.from(text.slice(0, -1)), Buffer.from([0x22, 0xc3, 0x28, 0xff, 0x22, 0x3a, 0x31]), Buffer.from("}")]) };
    case "truncated":
      return { headers: json, payload: text.slice(0, Math.max(1, text.length - 2)) };
    case "array":
      return { headers: json, payload: `[${text}]` };
    case "pollute":
      return { headers: json, payload: text === "{}" ? '{"__proto__":{"polluted":true}}' : `{"__proto__":{"polluted":true},${text.slice(1)}` };
    case "oversize":
      return { headers: json, payload: toJsonText({ ...body, text: "x".repeat(9 * 1024 * 1024) }) };
  }
}

function withExtras(base: Record<string, unknown>, extra: Record<string, unknown> | null): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(base)) if (v !== undefined) Object.defineProperty(out, k, { value: v, enumerable: true, writable: true, configurable: true });
  // defineProperty: a key "__proto__" becomes an own key, as JSON.parse would make it.
  for (const [k, v] of Object.entries(extra ?? {})) Object.defineProperty(out, k, { value: v, enumerable: true, writable: true, configurable: true });
  return out;
}

const optional = <T>(a: fc.Arbitrary<T>) => fc.option(a, { nil: undefined, freq: 3 });

/** POST /api/annotations with every field valid, missing, or hostile. */
export const createRequests = fc
  .record({
    user: optional(field("acct:prop@example.com")),
    group: optional(field("g-prop")),
    uri: optional(field("https://example.com/prop")),
    text: optional(field("some text")),
    tags: optional(field(["a", "b"])),
    extra: extras,
    how: envelope,
  })
  .map(({ extra, how, ...fields }): HostileRequest => ({ method: "POST", url: "/api/annotations", ...wrap(withExtras(fields, extra), how) }));

/** An id as a hostile client writes it in a path or a list. */
export const idCandidate = (existing: readonly string[]) =>
  fc.oneof(
    { weight: 2, arbitrary: fc.constantFrom(...existing) },
    { weight: 3, arbitrary: hostileString },
    { weight: 1, arbitrary: hostileNumber.map((n) => (n instanceof RawJson ? n.text : String(n))) },
    { weight: 1, arbitrary: fc.constantFrom("0", "-5", "007", "9223372036854775807", "9223372036854775808", "1e3", "+1", " 1", "0x10") },
  );

/** GET, PATCH and DELETE /api/annotations/:id with hostile ids and bodies. */
export const byIdRequests = (existing: readonly string[]) =>
  fc
    .record({
      method: fc.constantFrom<Method>("GET", "PATCH", "DELETE"),
      id: idCandidate(existing),
      group: optional(field("g2")),
      uri: optional(field("https://example.com/patched")),
      text: optional(field("patched")),
      tags: optional(field(["c"])),
      extra: extras,
      how: envelope,
    })
    .map(({ method, id, extra, how, ...fields }): HostileRequest => {
      const url = `/api/annotations/${encodeAny(id)}`;
      if (method !== "PATCH") return { method, url, headers: {} };
      return { method, url, ...wrap(withExtras(fields, extra), how) };
    });

/** GET, PUT, PATCH and DELETE /api/users/:userid with hostile user ids and bodies. */
export const userRequests = (existing: readonly string[]) =>
  fc
    .record({
      method: fc.constantFrom<Method>("GET", "PUT", "PATCH", "DELETE"),
      userid: fc.oneof({ weight: 2, arbitrary: fc.constantFrom(...existing) }, { weight: 3, arbitrary: hostileString }),
      displayName: optional(fc.oneof({ weight: 3, arbitrary: fc.constant("Prop") }, { weight: 1, arbitrary: fc.constant(null) }, { weight: 2, arbitrary: hostileValue })),
      hidden: optional(field(true)),
      extra: extras,
      how: envelope,
    })
    .map(({ method, userid, extra, how, ...fields }): HostileRequest => {
      const url = `/api/users/${encodeAny(userid)}`;
      if (method === "GET" || method === "DELETE") return { method, url, headers: {} };
      return { method, url, ...wrap(withExtras(fields, extra), how) };
    });

/** A query string with the route's parameters hostile, repeated, or joined by unknown ones. */
function queryString(params: Record<string, unknown>, extra: Record<string, unknown> | null, repeat: string | null): string {
  const parts: string[] = [];
  for (const [k, v] of Object.entries({ ...params, ...(extra ?? {}) })) {
    if (v === undefined) continue;
    const value = typeof v === "string" ? v : v instanceof RawJson ? v.text : JSON.stringify(v) ?? "";
    parts.push(`${encodeAny(k)}=${encodeAny(value)}`);
  }
  if (repeat) parts.push(`${repeat}=a`, `${repeat}=b`);
  return parts.length ? `?${parts.join("&")}` : "";
}

const queryExtras = fc.option(fc.dictionary(hostileString, hostileString, { maxKeys: 2 }), { freq: 5 });

/** GET /api/search with every parameter hostile. */
export const searchRequests = fc
  .record({
    uri: optional(field("https://example.com/prop")),
    user: optional(field("acct:prop@example.com")),
    group: optional(field("g-prop")),
    q: optional(field("text")),
    limit: optional(fc.oneof(fc.constantFrom("1", "20", "200", "201", "0", "-1", "1.5", "1e2", "9999999999"), hostileString)),
    include_hidden: optional(fc.oneof(fc.constantFrom("true", "false", "TRUE", "1", ""), hostileString)),
    extra: queryExtras,
    repeat: fc.option(fc.constantFrom("q", "user", "limit", "include_hidden"), { freq: 8 }),
  })
  .map(({ extra, repeat, ...params }): HostileRequest => ({ method: "GET", url: `/api/search${queryString(params, extra, repeat)}`, headers: {} }));

/** Authorization headers from valid to forged. */
export const authHeader = (token: string) =>
  fc.oneof(
    { weight: 6, arbitrary: fc.constant(`Bearer ${token}`) },
    { weight: 1, arbitrary: fc.constantFrom("", "Bearer ", "Bearer wrong", `bearer ${token}`, `Bearer ${token} `, `Basic ${Buffer.from(`x:${token}`).toString("base64")}`, `Bearer ${token}x`) },
  );

/** POST /admin/reindex with every filter and option hostile. */
export const reindexRequests = (token: string, existing: readonly string[]) =>
  fc
    .record({
      scope: optional(fc.oneof({ weight: 4, arbitrary: fc.constantFrom("user", "group", "updated", "created", "ids", "all") }, { weight: 1, arbitrary: hostileValue })),
      value: optional(field("acct:prop@example.com")),
      from: optional(fc.oneof(hostileDate, hostileValue)),
      to: optional(fc.oneof(hostileDate, hostileValue)),
      ids: optional(fc.oneof(fc.array(fc.oneof(idCandidate(existing), hostileNumber), { maxLength: 5 }), hostileValue)),
      force: optional(field(true)),
      priority: optional(fc.oneof(hostileNumber, hostileValue)),
      tag: optional(field("reindex-prop")),
      extra: extras,
      how: envelope,
      auth: authHeader(token),
    })
    .map(({ extra, how, auth, ...fields }): HostileRequest => {
      const req = wrap(withExtras(fields, extra), how);
      return { method: "POST", url: "/admin/reindex", ...req, headers: { ...req.headers, ...(auth ? { authorization: auth } : {}) } };
    });

/** The read-only routes (admin and ops) with hostile query strings, methods and credentials. */
export const readOnlyRequests = (paths: readonly string[], token: string | undefined) =>
  fc
    .record({
      path: fc.oneof({ weight: 4, arbitrary: fc.constantFrom(...paths) }, { weight: 1, arbitrary: hostileString.map((s) => `/${encodeAny(s)}`) }),
      method: fc.oneof({ weight: 4, arbitrary: fc.constant<Method>("GET") }, { weight: 1, arbitrary: fc.constantFrom<Method>("HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS") }),
      query: queryExtras,
      auth: token === undefined ? fc.constant("") : authHeader(token),
      body: fc.option(pollution, { freq: 4 }),
    })
    .map(({ path, method, query, auth, body }): HostileRequest => ({
      method,
      url: `${path}${queryString({}, query, null)}`,
      headers: { ...(auth ? { authorization: auth } : {}), ...(body && method !== "GET" && method !== "HEAD" ? { "content-type": "application/json" } : {}) },
      ...(body && method !== "GET" && method !== "HEAD" ? { payload: body.text } : {}),
    }));
