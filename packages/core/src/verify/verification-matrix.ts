import type { Collection } from "../collection.js";
import type { DownstreamState, SinkOperation } from "../sink.js";

export type WriteOutcome = "repaired" | "forced" | "deleted_downstream";

export type EntityPlan =
  | { action: "confirm" }
  | {
      action: "write";
      op: SinkOperation;
      outcome: WriteOutcome;
      /** The downstream is ahead of Postgres (edited behind tether's back): bump the row to this version first. */
      bumpVersionTo?: number;
    };

export interface PlanInput<Row> {
  collection: Collection<Row>;
  id: string;
  /** The row as Postgres has it now; undefined when hard-deleted. */
  row: Row | undefined;
  downstream: DownstreamState | undefined;
  force: boolean;
  /** Version carried by a hard-delete job. */
  deleteVersion?: number;
}

export function rowVersion<Row>(collection: Collection<Row>, row: Row): number {
  const v = Number((row as Record<string, unknown>)[collection.versionColumn]);
  if (!Number.isSafeInteger(v) || v < 0) throw new Error(`${collection.table}.${collection.versionColumn} is not a non-negative integer: ${String(v)}`);
  return v;
}

/** The operation that makes the downstream hold `row` (live document or tombstone). */
export function desiredOperation<Row>(collection: Collection<Row>, id: string, row: Row, version: number, force = false): SinkOperation {
  return collection.isDeleted(row)
    ? { kind: "tombstone", id, version, ...(force ? { force } : {}) }
    : { kind: "index", id, version, document: collection.toDocument(row), ...(force ? { force } : {}) };
}

/**
 * Decides, for one entity, whether the downstream already equals Postgres (confirm) or what
 * single write repairs it. Pure: no I/O.
 *
 * - live row: equal when the downstream holds a live document at the row's version.
 * - soft-deleted row: equal when the downstream holds a tombstone at or above the row's
 *   version (a tombstone, not mere absence, is what stops a late older write resurrecting it).
 * - hard-deleted row: equal when the downstream holds nothing.
 * - forced: rewrite once regardless; the caller still confirms by reading back.
 */
export function planEntity<Row>(input: PlanInput<Row>): EntityPlan {
  const { collection, id, row, downstream: ds, force } = input;
  if (row === undefined) {
    if (!ds) return { action: "confirm" };
    const version = Math.max(ds.version + 1, input.deleteVersion ?? 0);
    return { action: "write", op: { kind: "delete", id, version }, outcome: "deleted_downstream" };
  }
  const version = rowVersion(collection, row);
  const deleted = collection.isDeleted(row);
  if (deleted) {
    if (!force && ds?.deleted && ds.version >= version) return { action: "confirm" };
    // A live document at the row's own version would refuse a tombstone at that version
    // (external versioning wants a greater one): go one past it. A tombstone above the row's
    // deleted version still confirms it.
    const v = ds && (ds.version > version || (!ds.deleted && ds.version === version)) ? ds.version + 1 : version;
    return { action: "write", op: { kind: "tombstone", id, version: v, ...(force ? { force } : {}) }, outcome: force ? "forced" : "deleted_downstream" };
  }
  if (!force && ds && !ds.deleted && ds.version === version) return { action: "confirm" };
  if (ds && (ds.version > version || (ds.deleted && ds.version >= version))) {
    const bumped = ds.version + 1;
    const bumpedRow = { ...(row as Record<string, unknown>), [collection.versionColumn]: bumped } as Row;
    return { action: "write", op: desiredOperation(collection, id, bumpedRow, bumped), outcome: force ? "forced" : "repaired", bumpVersionTo: bumped };
  }
  return { action: "write", op: desiredOperation(collection, id, row, version, force), outcome: force ? "forced" : "repaired" };
}

/** True when what the downstream holds now confirms `row` (used on read-back after a write). */
export function isConfirmed<Row>(collection: Collection<Row>, row: Row | undefined, ds: DownstreamState | undefined, version?: number): boolean {
  if (row === undefined) return ds === undefined;
  const v = version ?? rowVersion(collection, row);
  if (collection.isDeleted(row)) return ds !== undefined && ds.deleted && ds.version >= v;
  return ds !== undefined && !ds.deleted && ds.version === v;
}
