import { describe, expect, it } from "vitest";
import { defineCollection } from "../src/index.js";

describe("collections", () => {
  it("reject identifiers that could smuggle SQL, naming the field", () => {
    expect(() => defineCollection({ name: "x", table: "x; drop table y", index: "x", toDocument: () => ({}) })).toThrow(/collection.table/);
    expect(() => defineCollection({ name: "x", table: "x", index: "x", toDocument: () => ({}), reindexScopes: { u: { kind: "equals", column: "a b" } } })).toThrow(
      /reindexScopes.u.column/,
    );
  });
});
