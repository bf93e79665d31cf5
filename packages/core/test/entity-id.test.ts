import { describe, expect, it } from "vitest";
import { canonicalEntityId, ID_ENCODINGS, idTypeClass, MAX_ID_BYTES } from "../src/internal.js";

const refused = (type: string | undefined, id: unknown) => {
  const c = canonicalEntityId(type, id);
  expect(c, `${type} ${JSON.stringify(String(id)).slice(0, 40)}`).toHaveProperty("error");
  return (c as { error: string }).error;
};

// One test per row of the table in src/entity-id.ts.
describe("the id rule", () => {
  it("syncs integer ids of smallint, integer and bigint columns as their canonical decimal, in 1..max of the type", () => {
    expect(canonicalEntityId("bigint", "007")).toEqual({ id: "7" });
    expect(canonicalEntityId("bigint", 42)).toEqual({ id: "42" });
    expect(canonicalEntityId("bigint", "9223372036854775807")).toEqual({ id: "9223372036854775807" });
    expect(canonicalEntityId("integer", "2147483647")).toEqual({ id: "2147483647" });
    expect(canonicalEntityId("smallint", "32767")).toEqual({ id: "32767" });
  });

  it("refuses integer ids that are 0, negative, past the type's max, signed, fractional or padded", () => {
    for (const bad of ["0", "-5", "+5", "1.5", "1e3", " 1", "", "9223372036854775808", 0, -1]) refused("bigint", bad);
    expect(refused("integer", "2147483648")).toBe('invalid id "2147483648": ids are integer values in 1..2147483647');
    refused("smallint", "32768");
  });

  it("syncs uuids in lower case", () => {
    expect(canonicalEntityId("uuid", "3F2504E0-4F89-11D3-9A0C-0305E82C3301")).toEqual({ id: "3f2504e0-4f89-11d3-9a0c-0305e82c3301" });
  });

  it("refuses anything else for a uuid column", () => {
    expect(refused("uuid", "3f2504e0")).toMatch(/ids are uuids/);
    refused("uuid", "");
  });

  it("syncs text ids of 1..512 bytes exactly as they are, whatever their characters, for text and any other column type", () => {
    const edge = `${"é".repeat(255)}ab`;
    expect(Buffer.byteLength(edge)).toBe(MAX_ID_BYTES);
    for (const id of ["jane.doe@example.com", "2024/0001", "HD 7", "Zoë 東京", " padded ", ".", "..", "a\tb\nc", "😀", "007", edge]) {
      for (const type of ["text", "character varying(600)", "citext", undefined]) expect(canonicalEntityId(type, id), `${type} ${id}`).toEqual({ id });
    }
  });

  it("refuses an empty text id: an engine _id cannot be empty", () => {
    expect(refused("text", "")).toBe('invalid id "": an id cannot be empty (the engine\'s document _id cannot)');
    refused(undefined, "");
  });

  it("refuses a text id past 512 bytes of UTF-8, by bytes not characters, naming its size and quoting its start", () => {
    expect(refused("text", `${"é".repeat(256)}x`)).toMatch(/^invalid id "é{40}…": it is 513 bytes of UTF-8; the engine's document _id holds at most 512$/);
    expect(refused("text", "x".repeat(513))).toMatch(/513 bytes/);
    // 200 emoji are 200 × 4 bytes: over the limit though far under 512 characters.
    expect(refused("text", "😀".repeat(200))).toMatch(/^invalid id "😀{40}…": it is 800 bytes/u);
  });

  it("refuses NUL and lone surrogates for every column type", () => {
    for (const type of ["text", "bigint", "uuid", undefined]) {
      expect(refused(type, "a\u0000b")).toMatch(/NUL/);
      expect(refused(type, "a\ud800")).toMatch(/surrogate/);
    }
  });

  it("refuses numbers JSON already rounded (past 2^53-1, or not integers)", () => {
    for (const type of ["bigint", "text"]) {
      expect(refused(type, 2 ** 63)).toMatch(/beyond 2\^53-1/);
      refused(type, 1.5);
    }
  });

  it("refuses values that are neither strings nor numbers", () => {
    for (const bad of [null, undefined, {}, [], true, 5n]) expect(refused("text", bad)).toMatch(/ids are strings/);
  });

  it("classes column types: integers, uuids, and everything else as text; the id travels raw to the engine and to kwargs", () => {
    expect(["smallint", "integer", "bigint"].map(idTypeClass)).toEqual(["integer", "integer", "integer"]);
    expect(idTypeClass("uuid")).toBe("uuid");
    expect([idTypeClass("text"), idTypeClass("character varying(64)"), idTypeClass(undefined)]).toEqual(["text", "text", "text"]);
    expect(ID_ENCODINGS).toMatchObject({ engineId: "raw", jobKwargs: "raw" });
  });
});
