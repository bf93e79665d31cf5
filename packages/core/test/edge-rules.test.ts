import { describe, expect, it } from "vitest";
import { findTextProblem, parseTimestampBound, textProblem, ValidationError } from "../src/internal.js";

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

  it("refuses NUL and lone surrogates in text, and finds them by path", () => {
    expect(textProblem("a😀b")).toBeUndefined();
    expect(textProblem("a\u0000")).toMatch(/NUL/);
    for (const s of ["\ud800", "x\udc00", "\ud83d", "\ude00\ud83d"]) expect(textProblem(s), JSON.stringify(s)).toMatch(/surrogate/);
    expect(findTextProblem({ tags: ["ok", "a\u0000"] })).toMatchObject({ field: "tags.1" });
    expect(findTextProblem({ "": "\ud800" }, "q")).toMatchObject({ field: 'q.""' });
    expect(findTextProblem({ ok: "fine", n: 1 })).toBeUndefined();
  });
});
