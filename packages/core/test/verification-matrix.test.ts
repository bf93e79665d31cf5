import { describe, expect, it } from "vitest";
import { defineCollection, planEntity, isConfirmed, backoffDelay, entityHash } from "../src/index.js";

interface Row {
  id: string;
  version: string;
  deleted_at: Date | null;
  t: string;
}
const c = defineCollection<Row>({ name: "thing", table: "thing", index: "things", deletedColumn: "deleted_at", toDocument: (r) => ({ t: r.t }) });
const live = (version: number): Row => ({ id: "1", version: String(version), deleted_at: null, t: "x" });
const dead = (version: number): Row => ({ ...live(version), deleted_at: new Date() });

describe("planning one entity", () => {
  it("confirms a live row whose document holds the same version", () => {
    expect(planEntity({ collection: c, id: "1", row: live(3), downstream: { version: 3, deleted: false }, force: false })).toEqual({ action: "confirm" });
  });

  it("writes a live row whose document is missing, older, or a tombstone", () => {
    for (const ds of [undefined, { version: 2, deleted: false }]) {
      const p = planEntity({ collection: c, id: "1", row: live(3), downstream: ds, force: false });
      expect(p).toMatchObject({ action: "write", outcome: "repaired", op: { kind: "index", version: 3, document: { t: "x" } } });
    }
  });

  it("leapfrogs past a downstream version Postgres never had", () => {
    const p = planEntity({ collection: c, id: "1", row: live(3), downstream: { version: 9, deleted: false }, force: false });
    expect(p).toMatchObject({ action: "write", bumpVersionTo: 10, op: { kind: "index", version: 10 } });
  });

  it("tombstones a soft-deleted row and confirms only a tombstone at or above its version", () => {
    expect(planEntity({ collection: c, id: "1", row: dead(4), downstream: { version: 4, deleted: true }, force: false })).toEqual({ action: "confirm" });
    expect(planEntity({ collection: c, id: "1", row: dead(4), downstream: undefined, force: false })).toMatchObject({ op: { kind: "tombstone", version: 4 } });
    // A live document at the row's own version refuses a tombstone at that version (external
    // versioning wants a greater one), so the tombstone goes one past it.
    expect(planEntity({ collection: c, id: "1", row: dead(4), downstream: { version: 4, deleted: false }, force: false })).toMatchObject({
      op: { kind: "tombstone", version: 5 },
    });
  });

  it("deletes downstream what Postgres no longer has, with a version above the stored one", () => {
    expect(planEntity({ collection: c, id: "1", row: undefined, downstream: undefined, force: false })).toEqual({ action: "confirm" });
    expect(planEntity({ collection: c, id: "1", row: undefined, downstream: { version: 5, deleted: false }, force: false, deleteVersion: 3 })).toMatchObject({
      op: { kind: "delete", version: 6 },
      outcome: "deleted_downstream",
    });
  });

  it("rewrites a forced entity that already looks current", () => {
    expect(planEntity({ collection: c, id: "1", row: live(3), downstream: { version: 3, deleted: false }, force: true })).toMatchObject({
      action: "write",
      outcome: "forced",
      op: { force: true, version: 3 },
    });
  });

  it("confirms on read-back only what equals Postgres", () => {
    expect(isConfirmed(c, live(3), { version: 3, deleted: false })).toBe(true);
    expect(isConfirmed(c, live(3), { version: 2, deleted: false })).toBe(false);
    expect(isConfirmed(c, live(3), undefined)).toBe(false);
    expect(isConfirmed(c, dead(3), { version: 3, deleted: false })).toBe(false);
    expect(isConfirmed(c, undefined, undefined)).toBe(true);
  });
});

describe("collections", () => {
  it("reject identifiers that could smuggle SQL, naming the field", () => {
    expect(() => defineCollection({ name: "x", table: "x; drop table y", index: "x", toDocument: () => ({}) })).toThrow(/collection.table/);
    expect(() => defineCollection({ name: "x", table: "x", index: "x", toDocument: () => ({}), reindexScopes: { u: { kind: "equals", column: "a b" } } })).toThrow(
      /reindexScopes.u.column/,
    );
  });
});

describe("backoff and hashes", () => {
  it("grows exponentially within the jitter band and stops at the cap", () => {
    expect(backoffDelay(0, { baseMs: 1000 }, () => 0)).toBe(500);
    expect(backoffDelay(3, { baseMs: 1000 }, () => 0.999)).toBeLessThan(12_000);
    expect(backoffDelay(3, { baseMs: 1000 }, () => 0)).toBe(4000);
    expect(backoffDelay(40, { baseMs: 1000, maxMs: 60_000 }, () => 0.5)).toBe(60_000);
  });

  it("hashes (id, version) into 28 bits, differently per version", () => {
    expect(entityHash("1", 1)).not.toBe(entityHash("1", 2));
    expect(entityHash("42", 7)).toBeLessThan(2 ** 28);
  });
});
