import { describe, expect, it } from "vitest";
import {
  classifyDrift,
  confirmsAsIs,
  contentHash,
  defineCollection,
  DOWNSTREAM_CELLS,
  downstreamCell,
  isConfirmed,
  planEntity,
  POSTGRES_STATES,
  readBackVerdict,
  type DownstreamCell,
  type DownstreamState,
  type DriftKind,
  type PostgresState,
} from "../src/internal.js";

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

  it("tombstones downstream what Postgres no longer has, with a version above the stored one and the delete's", () => {
    expect(planEntity({ collection: c, id: "1", row: undefined, downstream: undefined, force: false })).toEqual({ action: "confirm" });
    expect(planEntity({ collection: c, id: "1", row: undefined, downstream: undefined, force: false, deleteVersion: 4 })).toMatchObject({ op: { kind: "tombstone", version: 4 } });
    expect(planEntity({ collection: c, id: "1", row: undefined, downstream: { version: 5, deleted: false }, force: false, deleteVersion: 3 })).toMatchObject({
      op: { kind: "tombstone", version: 6 },
      outcome: "deleted_downstream",
    });
    expect(planEntity({ collection: c, id: "1", row: undefined, downstream: { version: 5, deleted: true }, force: false, deleteVersion: 3 })).toEqual({ action: "confirm" });
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
    expect(isConfirmed(c, undefined, { version: 4, deleted: true })).toBe(true);
    expect(isConfirmed(c, undefined, { version: 4, deleted: true }, 5)).toBe(false);
    expect(isConfirmed(c, undefined, undefined, 5)).toBe(false);
    expect(isConfirmed(c, undefined, { version: 4, deleted: false })).toBe(false);
  });
});

// Every cell of the table in verification-matrix.ts's header, for a row at version 5 (a
// hard-delete job carrying version 7 where there is no row). `normal` and `forced` are the
// write the drainer plans ("confirm" when none); `confirms` is the version a read-back must find.
const V = 5;
type Write = "confirm" | `${"index" | "tombstone" | "delete"} ${number}${" bump" | ""}`;
interface Cell {
  pg: PostgresState;
  ds: DownstreamCell;
  normal: Write;
  forced: Write;
  drift: DriftKind | undefined;
}
const MATRIX: Cell[] = [
  { pg: "absent", ds: "nothing", normal: "tombstone 7", forced: "tombstone 7", drift: undefined },
  { pg: "absent", ds: "document_older", normal: "tombstone 7", forced: "tombstone 7", drift: "ghost" },
  { pg: "absent", ds: "document_equal", normal: "tombstone 7", forced: "tombstone 7", drift: "ghost" },
  { pg: "absent", ds: "document_other_body", normal: "tombstone 7", forced: "tombstone 7", drift: "ghost" },
  { pg: "absent", ds: "document_newer", normal: "tombstone 9", forced: "tombstone 9", drift: "ghost" },
  { pg: "absent", ds: "tombstone_older", normal: "tombstone 7", forced: "tombstone 7", drift: undefined },
  { pg: "absent", ds: "tombstone_equal", normal: "tombstone 7", forced: "tombstone 7", drift: undefined },
  { pg: "absent", ds: "tombstone_newer", normal: "confirm", forced: "confirm", drift: undefined },
  { pg: "live", ds: "nothing", normal: "index 5", forced: "index 5", drift: "missing" },
  { pg: "live", ds: "document_older", normal: "index 5", forced: "index 5", drift: "stale" },
  { pg: "live", ds: "document_equal", normal: "confirm", forced: "index 5", drift: undefined },
  // Fast verify compares versions: another body at the row's version is found by the deep one (content).
  { pg: "live", ds: "document_other_body", normal: "index 6 bump", forced: "index 6 bump", drift: undefined },
  { pg: "live", ds: "document_newer", normal: "index 9 bump", forced: "index 9 bump", drift: "stale" },
  { pg: "live", ds: "tombstone_older", normal: "index 5", forced: "index 5", drift: "missing" },
  { pg: "live", ds: "tombstone_equal", normal: "index 6 bump", forced: "index 6 bump", drift: "missing" },
  { pg: "live", ds: "tombstone_newer", normal: "index 9 bump", forced: "index 9 bump", drift: "missing" },
  { pg: "deleted", ds: "nothing", normal: "tombstone 5", forced: "tombstone 5", drift: undefined },
  { pg: "deleted", ds: "document_older", normal: "tombstone 5", forced: "tombstone 5", drift: "deleted_live" },
  { pg: "deleted", ds: "document_equal", normal: "tombstone 6", forced: "tombstone 6", drift: "deleted_live" },
  { pg: "deleted", ds: "document_other_body", normal: "tombstone 6", forced: "tombstone 6", drift: "deleted_live" },
  { pg: "deleted", ds: "document_newer", normal: "tombstone 9", forced: "tombstone 9", drift: "deleted_live" },
  { pg: "deleted", ds: "tombstone_older", normal: "tombstone 5", forced: "tombstone 5", drift: undefined },
  { pg: "deleted", ds: "tombstone_equal", normal: "confirm", forced: "tombstone 5", drift: undefined },
  { pg: "deleted", ds: "tombstone_newer", normal: "confirm", forced: "tombstone 9", drift: undefined },
];

/** The content hash of the live row's document (`live(V)` builds `{ t: "x" }`). */
const ROW_BODY = contentHash({ t: "x" });

/**
 * A downstream state in `cell` against version V (older = 3, equal = V, newer = 8); live
 * documents carry a content hash: the row's, but for "document_other_body".
 */
function downstreamIn(cell: DownstreamCell): DownstreamState | undefined {
  if (cell === "nothing") return undefined;
  if (cell === "document_other_body") return { deleted: false, version: V, content: contentHash({ t: "written before a restore" }) };
  const [kind, rel] = cell.split("_") as ["document" | "tombstone", "older" | "equal" | "newer"];
  return { deleted: kind === "tombstone", version: rel === "older" ? 3 : rel === "equal" ? V : 8, ...(kind === "document" ? { content: ROW_BODY } : {}) };
}
const rowIn = (pg: PostgresState): Row | undefined => (pg === "absent" ? undefined : pg === "live" ? live(V) : dead(V));

function describeWrite(pg: PostgresState, cell: DownstreamCell, force: boolean): Write {
  const p = planEntity({ collection: c, id: "1", row: rowIn(pg), downstream: downstreamIn(cell), force, deleteVersion: 7 });
  if (p.action === "confirm") return "confirm";
  return `${p.op.kind} ${p.op.version}${p.bumpVersionTo !== undefined ? " bump" : ""}` as Write;
}

describe("the verification matrix", () => {
  it("lists every Postgres state × downstream state once", () => {
    const cells = MATRIX.map((m) => `${m.pg}/${m.ds}`);
    expect(new Set(cells).size).toBe(cells.length);
    expect(cells.sort()).toEqual(POSTGRES_STATES.flatMap((pg) => DOWNSTREAM_CELLS.map((ds) => `${pg}/${ds}`)).sort());
    for (const ds of DOWNSTREAM_CELLS) expect(downstreamCell(downstreamIn(ds), V, ROW_BODY)).toBe(ds);
  });

  describe.each(MATRIX)("Postgres $pg, downstream $ds", (m) => {
    it(`plans "${m.normal}" for a normal job`, () => {
      expect(describeWrite(m.pg, m.ds, false)).toBe(m.normal);
    });

    it(`plans "${m.forced}" for a forced job`, () => {
      expect(describeWrite(m.pg, m.ds, true)).toBe(m.forced);
    });

    it("confirms on read-back exactly what it wrote, and nothing else", () => {
      const p = planEntity({ collection: c, id: "1", row: rowIn(m.pg), downstream: downstreamIn(m.ds), force: true, deleteVersion: 7 });
      if (p.action === "confirm") {
        expect(m.pg).toBe("absent");
        expect(isConfirmed(c, undefined, undefined)).toBe(true);
    expect(isConfirmed(c, undefined, { version: 4, deleted: true })).toBe(true);
    expect(isConfirmed(c, undefined, { version: 4, deleted: true }, 5)).toBe(false);
    expect(isConfirmed(c, undefined, undefined, 5)).toBe(false);
    expect(isConfirmed(c, undefined, { version: 4, deleted: false })).toBe(false);
        return;
      }
      const body = p.op.kind === "index" ? { content: contentHash(p.op.document) } : {};
      const wrote: DownstreamState | undefined = p.op.kind === "delete" ? undefined : { version: p.op.version, deleted: p.op.kind === "tombstone", ...body };
      const row = rowIn(m.pg);
      expect(readBackVerdict(c, row, p.op, wrote)).toEqual({ confirmed: true });
      // What was there before the write does not confirm it (unless it already equals it, body included).
      const stale = downstreamIn(m.ds);
      const sameBody = stale?.content === wrote?.content;
      const sameAsWritten = stale?.deleted === wrote?.deleted && ((stale?.version === wrote?.version && sameBody) || (wrote?.deleted === true && (stale?.version ?? 0) >= wrote.version));
      if (!sameAsWritten) expect(readBackVerdict(c, row, p.op, stale).confirmed).toBe(false);
    });

    it("confirms as it stands exactly where it plans a confirmation", () => {
      for (const force of [false, true]) {
        const confirms = confirmsAsIs({ collection: c, id: "1", row: rowIn(m.pg), downstream: downstreamIn(m.ds), force, deleteVersion: 7 });
        expect(confirms).toBe((force ? m.forced : m.normal) === "confirm");
      }
    });

    it("compares by version alone a document that carries no content hash", () => {
      const ds = downstreamIn(m.ds);
      if (ds?.content === undefined) return;
      const { content: _, ...unhashed } = ds;
      const plan = planEntity({ collection: c, id: "1", row: rowIn(m.pg), downstream: unhashed, force: false, deleteVersion: 7 });
      const equalCell = m.ds === "document_other_body" ? "document_equal" : m.ds;
      expect(plan.action === "confirm").toBe(MATRIX.find((n) => n.pg === m.pg && n.ds === equalCell)!.normal === "confirm");
    });

    it(`classifies the drift as ${m.drift ?? "none"}`, () => {
      const row = m.pg === "absent" ? undefined : { version: V, live: m.pg === "live" };
      expect(classifyDrift(row, downstreamIn(m.ds))).toBe(m.drift);
    });
  });

  it("never confirms a live row with an embedded change pending: rewrites it at the row's version when the downstream is below, bumps past the downstream otherwise; a deleted row is unaffected", () => {
    for (const cell of DOWNSTREAM_CELLS) {
      const ds = downstreamIn(cell);
      for (const force of [false, true]) {
        const input = { collection: c, id: "1", row: live(V), downstream: ds, force, embedPending: true };
        expect(confirmsAsIs(input)).toBe(false);
        const plan = planEntity(input);
        if (ds !== undefined && ds.version >= V) {
          const above = ds.version + 1;
          expect(plan).toMatchObject({ action: "write", bumpVersionTo: above, op: { kind: "index", version: above } });
        } else {
          expect(plan).toMatchObject({ action: "write", op: { kind: "index", version: V } });
          expect(plan).not.toHaveProperty("bumpVersionTo");
        }
      }
      const deleted = { collection: c, id: "1", row: dead(V), downstream: ds, force: false, deleteVersion: 7 };
      expect(planEntity({ ...deleted, embedPending: true })).toEqual(planEntity(deleted));
    }
  });

  it("never confirms a document at the row's version that holds another body, on the claim-time read or on read-back", () => {
    const other = downstreamIn("document_other_body");
    expect(confirmsAsIs({ collection: c, id: "1", row: live(V), downstream: other, force: false })).toBe(false);
    expect(isConfirmed(c, live(V), other)).toBe(false);
    const op = { kind: "index" as const, id: "1", version: V, document: { t: "x" } };
    expect(readBackVerdict(c, live(V), op, other)).toMatchObject({ confirmed: false, reason: expect.stringContaining("another body") });
    // The row's own body at its version confirms, on either read.
    expect(isConfirmed(c, live(V), { version: V, deleted: false, content: ROW_BODY })).toBe(true);
  });

  it("bumps past a delete marker that refused a write and left nothing readable", () => {
    const op = { kind: "index" as const, id: "1", version: V, document: { t: "x" } };
    expect(readBackVerdict(c, live(V), op, undefined, 12)).toMatchObject({ confirmed: false, bumpVersionTo: 13 });
    // Without a conflict, or after a delete, nothing is bumped: the retry alone repairs it.
    expect(readBackVerdict(c, live(V), op, undefined)).not.toHaveProperty("bumpVersionTo");
    expect(readBackVerdict(c, undefined, { kind: "delete", id: "1", version: 7 }, { version: 8, deleted: false }, 8)).not.toHaveProperty("bumpVersionTo");
  });
});
