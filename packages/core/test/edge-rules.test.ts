import { describe, expect, it } from "vitest";
import { canonicalEntityId, findTextProblem, parseTimestampBound, textProblem, ValidationError } from "../src/internal.js";

describe("the edge rules core shares with every caller", () => {
  it("reads re-index bounds as real calendar instants in 0001..9999 UTC", () => {
    expect(parseTimestampBound("from", "2024-02-29").toISOString()).toBe("2024-02-29T00:00:00.000Z");
    expect(parseTimestampBound("from", "2026-01-31T10:00:00+02:00").toISOString()).toBe("2026-01-31T08:00:00.000Z");
    expect(parseTimestampBound("from", "2026-01-31T10:00").toISOString()).toBe("2026-01-31T10:00:00.000Z");
    expect(parseTimestampBound("from", "0001-01-01").toISOString()).toBe("0001-01-01T00:00:00.000Z");
    expect(parseTimestampBound("to", "9999-12-31T23:59:59.999999Z").toISOString()).toBe("9999-12-31T23:59:59.999Z");
    for (const bad of ["2024-02-30", "2023-02-29", "1900-02-29", "2026-00-10", "2026-04-31", "2026-01-01T24:00", "2026-01-01T23:60", "0000-01-01", "0000-12-31T23:59:59Z", "10000-01-01", "2026-01-01T00:00+16:00", "May 3", "1", ""]) {
      expect(() => parseTimestampBound("from", bad), bad).toThrow(ValidationError);
    }
    expect(() => parseTimestampBound("to", "2024-02-30")).toThrow("to: 2024-02-30 is not a calendar date");
  });

  it("applies one id rule: positive integers within the column's type, canonical text", () => {
    expect(canonicalEntityId("bigint", "007")).toEqual({ id: "7" });
    expect(canonicalEntityId("bigint", 42)).toEqual({ id: "42" });
    expect(canonicalEntityId("bigint", "9223372036854775807")).toEqual({ id: "9223372036854775807" });
    expect(canonicalEntityId("integer", "2147483648")).toHaveProperty("error");
    for (const bad of ["0", "-5", "+5", "1.5", "1e3", " 1", "", "9223372036854775808", 0, -1, 1.5, 2 ** 63, null, {}]) {
      expect(canonicalEntityId("bigint", bad), String(bad)).toHaveProperty("error");
    }
    expect(canonicalEntityId("uuid", "3F2504E0-4F89-11D3-9A0C-0305E82C3301")).toEqual({ id: "3f2504e0-4f89-11d3-9a0c-0305e82c3301" });
    expect(canonicalEntityId("text", "a b")).toHaveProperty("error");
  });

  it("refuses NUL and lone surrogates in text, and finds them by path", () => {
    expect(textProblem("a😀b")).toBeUndefined();
    expect(textProblem("a\u0000")).toMatch(/NUL/);
    for (const s of ["\ud800", "x\udc00", "\ud83d", "\ude00\ud83d"]) expect(textProblem(s), JSON.stringify(s)).toMatch(/surrogate/);
    expect(findTextProblem({ tags: ["ok", "a\u0000"] })).toMatchObject({ field: "tags.1" });
    expect(findTextProblem({ "": "\ud800" }, "q")).toMatchObject({ field: 'q.""' });
    expect(findTextProblem({ ok: "fine", n: 1 })).toBeUndefined();
  });
});
