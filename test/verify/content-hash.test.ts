import { createHash } from "node:crypto";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { contentHash } from "@tether/core";

/** The definition, written the slow and obvious way: canonical JSON, md5, 16 hex digits. */
function reference(document: unknown): string {
  const canonical = (v: unknown): string => {
    if (v === null || typeof v !== "object") return JSON.stringify(v) ?? "null";
    if (Array.isArray(v)) return `[${v.map(canonical).join(",")}]`;
    if (typeof (v as { toJSON?: unknown }).toJSON === "function") return canonical((v as { toJSON: () => unknown }).toJSON());
    const keys = Object.keys(v).filter((k) => (v as Record<string, unknown>)[k] !== undefined).sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${keys.map((k) => `${JSON.stringify(k)}:${canonical((v as Record<string, unknown>)[k])}`).join(",")}}`;
  };
  return createHash("md5").update(canonical(document)).digest("hex").slice(0, 16);
}

/** The same members inserted in reverse order, at every depth. */
function reversed(v: unknown): unknown {
  if (v === null || typeof v !== "object") return v;
  if (Array.isArray(v)) return v.map(reversed);
  const out: Record<string, unknown> = {};
  for (const k of Object.keys(v).reverse()) Object.defineProperty(out, k, { value: reversed((v as Record<string, unknown>)[k]), enumerable: true, writable: true, configurable: true });
  return out;
}

describe("contentHash", () => {
  it("is the md5 of canonical JSON, whatever the key order, for any JSON document (integer-like and __proto__ keys included)", () => {
    fc.assert(
      fc.property(fc.dictionary(fc.oneof(fc.string(), fc.constantFrom("0", "10", "2", "__proto__", "a\"b")), fc.jsonValue()), (doc) => {
        expect(contentHash(doc)).toBe(reference(doc));
        expect(contentHash(reversed(doc) as Record<string, unknown>)).toBe(contentHash(doc));
      }),
      { numRuns: 300 },
    );
  });

  it("hashes a Date as the string JSON makes of it, and drops undefined members as JSON does", () => {
    const at = new Date("2026-11-24T10:00:00.000Z");
    expect(contentHash({ at, gone: undefined })).toBe(contentHash({ at: "2026-11-24T10:00:00.000Z" }));
    expect(contentHash({ at })).not.toBe(contentHash({ at: new Date("2026-11-24T10:00:01.000Z") }));
  });
});
