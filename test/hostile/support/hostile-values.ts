import fc from "fast-check";

/** JSON text spliced into a body as is: numbers JSON.stringify cannot write (2^63 exactly, 1e400). */
export class RawJson {
  constructor(readonly text: string) {}
}

/** JSON text of a value that may hold `RawJson` fragments (and lone surrogates, escaped as JSON allows). */
export function toJsonText(v: unknown): string {
  if (v instanceof RawJson) return v.text;
  if (Array.isArray(v)) return `[${v.map(toJsonText).join(",")}]`;
  if (v !== null && typeof v === "object") {
    return `{${Object.entries(v)
      .map(([k, x]) => `${JSON.stringify(k)}:${toJsonText(x)}`)
      .join(",")}}`;
  }
  return JSON.stringify(v) ?? "null";
}

const LENGTHS = [0, 1, 127, 128, 129, 200, 201, 255, 256, 257, 1_000, 1_001, 2_048, 2_049, 10_000, 10_001, 70_000];

/** Strings a hostile client sends: NUL, lone surrogates, control characters, lengths at and past every limit, injections. */
export const hostileString: fc.Arbitrary<string> = fc.oneof(
  fc.string({ maxLength: 20 }),
  fc.string({ unit: "binary", maxLength: 20 }),
  fc.string({ unit: fc.integer({ min: 0, max: 0x1f }).map((c) => String.fromCharCode(c)), minLength: 1, maxLength: 8 }),
  // Any UTF-16 code unit, lone surrogates included.
  fc.string({ unit: fc.integer({ min: 0, max: 0xffff }).map((c) => String.fromCharCode(c)), minLength: 1, maxLength: 8 }),
  fc.constantFrom(...LENGTHS).map((n) => "x".repeat(n)),
  fc.constantFrom(
    "\u0000",
    "a\u0000b",
    "\ud800",
    "x\ud800y",
    "\udc00",
    "\ud83d",
    "😀",
    "\u202e",
    "\ufeff",
    "\uffff",
    "' OR '1'='1",
    "1; DROP TABLE annotation; --",
    "__proto__",
    "constructor",
    "%00",
    "%ED%A0%80",
    "../../etc/passwd",
    "<script>alert(1)</script>",
    "${jndi:ldap://x}",
    "acct:ann",
    "reindex",
    "reindex-x",
    "all",
    "user",
    "ids",
    "updated",
    " ",
    "",
  ),
);

/** Numbers at and past every limit, as JSON numbers (some only writable as raw JSON text). */
export const hostileNumber: fc.Arbitrary<number | RawJson> = fc.oneof(
  fc.integer(),
  fc.double(),
  fc.constantFrom(0, -0, 1, -1, 1.5, 100, 1_000_000, 1_000_001, 2 ** 15, 2 ** 31 - 1, 2 ** 31, 2 ** 53 - 1, 2 ** 53, 2 ** 63, -(2 ** 63), 1e308, Number.MIN_VALUE),
  fc.constantFrom("9223372036854775807", "9223372036854775808", "18446744073709551616", "1e400", "-1e400", "1E2", "0.0000001").map((t) => new RawJson(t)),
);

const pad = (n: number, w: number) => String(n).padStart(w, "0");

/** Date strings at calendar edges: Feb 29/30, month 13, hour 24, years 0000, 0001, 9999, 10000, offsets past ±15:59. */
export const hostileDate: fc.Arbitrary<string> = fc.oneof(
  fc
    .record({
      y: fc.constantFrom(0, 1, 1899, 1900, 1970, 2000, 2023, 2024, 2100, 9999),
      m: fc.integer({ min: 0, max: 13 }),
      d: fc.integer({ min: 0, max: 32 }),
      time: fc.option(fc.record({ h: fc.integer({ min: 0, max: 25 }), mi: fc.integer({ min: 0, max: 60 }), s: fc.integer({ min: 0, max: 61 }) })),
      zone: fc.constantFrom("", "Z", "+00:00", "+14:00", "-12:00", "+15:59", "+16:00", "-2400"),
    })
    .map(({ y, m, d, time, zone }) => `${pad(y, 4)}-${pad(m, 2)}-${pad(d, 2)}${time ? `T${pad(time.h, 2)}:${pad(time.mi, 2)}:${pad(time.s, 2)}${zone}` : ""}`),
  fc.constantFrom("10000-01-01", "-0001-01-01", "2026-01-01T00:00:00.1234567891Z", "2026-1-1", "yesterday", "1", "2026-02-01T00:00:00Z'--"),
  fc.date({ min: new Date("0001-01-01T00:00:00Z"), max: new Date("9999-12-31T23:59:59Z"), noInvalidDate: true }).map((d) => d.toISOString()),
);

/** An object smuggling a prototype through JSON (JSON.parse keeps "__proto__" as an own key). */
export const pollution: fc.Arbitrary<RawJson> = fc.constantFrom(
  new RawJson('{"__proto__":{"polluted":true}}'),
  new RawJson('{"constructor":{"prototype":{"polluted":true}}}'),
  new RawJson('{"a":{"__proto__":{"polluted":true}}}'),
);

/** Any JSON value a field might receive instead of what it expects. */
export const hostileValue: fc.Arbitrary<unknown> = fc.oneof(
  { weight: 5, arbitrary: hostileString },
  { weight: 2, arbitrary: hostileNumber },
  { weight: 1, arbitrary: hostileDate },
  { weight: 1, arbitrary: fc.constantFrom(true, false, null) },
  { weight: 1, arbitrary: fc.array(hostileString, { maxLength: 4 }) },
  { weight: 1, arbitrary: fc.array(fc.oneof(hostileString, hostileNumber), { minLength: 1, maxLength: 60 }) },
  { weight: 1, arbitrary: pollution },
  { weight: 1, arbitrary: fc.dictionary(hostileString, hostileString, { maxKeys: 3 }) },
);

/** Percent-encodes any string for a URL, lone surrogates as their (invalid) CESU-8 bytes. */
export function encodeAny(s: string): string {
  let out = "";
  for (const ch of s) {
    try {
      out += encodeURIComponent(ch);
    } catch {
      const c = ch.charCodeAt(0);
      out += `%${(0xe0 | (c >> 12)).toString(16)}%${(0x80 | ((c >> 6) & 0x3f)).toString(16)}%${(0x80 | (c & 0x3f)).toString(16)}`.toUpperCase();
    }
  }
  return out;
}
