import type { Collection } from "../collection.js";
import type { DownstreamState, SinkOperation } from "../sink.js";
import { contentHash } from "./content-hash.js";

/**
 * The verification matrix: for one entity, what Postgres holds × what the downstream holds ×
 * the job's kind → what the drainer writes, when the job is confirmed, and how `tether verify`
 * names the drift. Pure: no I/O. The drainer (../drain/collection-pass.ts) and anti-entropy
 * (./verify-collection.ts) both decide through this module and nowhere else.
 *
 * v = the row's version, w = the downstream's version, d = the version a hard-delete job carries.
 * "bump" = raise the row's version past w first (only if the row still has v), then write at the
 * version it took: w+1 here, `tether.next_version(w)` (at least w+1, never a version used before;
 * see ../write/version-rule.ts) when the drainer applies it. The drainer commits the bump and
 * writes in its next pass (the job due again at once, no attempt counted): the engine is never
 * sent a version before Postgres holds it.
 *
 * | Postgres        | downstream      | normal job          | forced job               | confirmed when (read back)    | drift        |
 * | --------------- | --------------- | ------------------- | ------------------------ | ----------------------------- | ------------ |
 * | no row          | nothing         | tombstone at d      | tombstone at d           | tombstone at ≥ d              | —            |
 * | no row          | document, any w | tombstone at max(w+1,d) | the same             | tombstone at ≥ the written v  | ghost        |
 * | no row          | tombstone w < d | tombstone at d      | tombstone at d           | tombstone at ≥ d              | —            |
 * | no row          | tombstone w ≥ d | confirm             | confirm                  | tombstone at ≥ d              | —            |
 * | live v          | nothing         | index at v          | index at v (force)       | document at exactly v         | missing      |
 * | live v          | document w < v  | index at v          | index at v (force)       | document at exactly v         | stale        |
 * | live v          | document w = v  | confirm             | index at v (force)       | document at exactly v         | —            |
 * | live v          | document w = v, another body | bump, index at w+1 | bump, index at w+1 | document at exactly w+1 | content (deep verify) |
 * | live v          | document w > v  | bump, index at w+1  | bump, index at w+1       | document at exactly w+1       | stale        |
 * | live v          | tombstone w < v | index at v          | index at v (force)       | document at exactly v         | missing      |
 * | live v          | tombstone w = v | bump, index at w+1  | bump, index at w+1       | document at exactly w+1       | missing      |
 * | live v          | tombstone w > v | bump, index at w+1  | bump, index at w+1       | document at exactly w+1       | missing      |
 * | soft-deleted v  | nothing         | tombstone at v      | tombstone at v (force)   | tombstone at ≥ the written v  | —            |
 * | soft-deleted v  | document w < v  | tombstone at v      | tombstone at v (force)   | tombstone at ≥ the written v  | deleted_live |
 * | soft-deleted v  | document w = v  | tombstone at v+1    | tombstone at v+1 (force) | tombstone at ≥ the written v  | deleted_live |
 * | soft-deleted v  | document w > v  | tombstone at w+1    | tombstone at w+1 (force) | tombstone at ≥ the written v  | deleted_live |
 * | soft-deleted v  | tombstone w < v | tombstone at v      | tombstone at v (force)   | tombstone at ≥ the written v  | —            |
 * | soft-deleted v  | tombstone w = v | confirm             | tombstone at v (force)   | tombstone at ≥ the written v  | —            |
 * | soft-deleted v  | tombstone w > v | confirm             | tombstone at w+1 (force) | tombstone at ≥ the written v  | —            |
 * | live v, embedded change pending | nothing, or w < v | index at v | index at v (force) | document at exactly v | embedded |
 * | live v, embedded change pending | w ≥ v | bump, index at w+1 | bump, index at w+1 | document at exactly w+1 | embedded |
 *
 * Why these cells:
 * - A live row is equal only to a live document at its own version; a soft-deleted row only to
 *   a tombstone at or above its version (a tombstone, not mere absence, is what stops a late
 *   older write resurrecting it); a hard-deleted row to a tombstone at or above the delete's
 *   version d, too: a removed document is guarded only by the engine's delete marker, which
 *   lasts `index.gc_deletes` (60 s), while a tombstone lasts until maintenance purges it after
 *   the tombstone retention (`purgeTombstones`). With no delete version (a job that only names
 *   the entity) nothing or any tombstone is equal.
 * - A live document at the row's version is the row's only when its content hash (`tether.content`,
 *   stored with every document the sink writes) is the hash of the document built from the row:
 *   a version is unique only while `tether.version_seq` moves forward, and a Postgres restored
 *   from a backup (a point-in-time recovery, a failover to a lagging replica) hands versions out
 *   again that the engine already holds, for other bodies, often of the same entity. Such a
 *   document ("another body") is rewritten past itself, as one ahead of the row is; the
 *   read-back of a write compares the body too, whenever the engine might have held the written
 *   version before the write (`readBack`). A document without a hash (a sink that records none,
 *   or one written before) is compared by version alone.
 * - External versioning refuses a write at or below what the downstream holds: a downstream
 *   ahead of Postgres (edited behind tether's back) is overtaken by bumping the row first, and a
 *   tombstone over a live document at the same version goes one past it.
 * - The job's outcome is "up_to_date" when confirmed without a write, else "repaired" (live
 *   row), "deleted_downstream" (deleted row) or "forced".
 * - On read-back, a write refused as older (a conflict) that left nothing readable met a delete
 *   marker made behind tether's back (kept for index.gc_deletes): the row is bumped past the
 *   marker so the retry is not refused again (`readBackVerdict`).
 * - A live row whose document reads a row with a change still to expand (a fan-out not yet
 *   reached it: `tether.embed_change`, ../fan-out-rule.ts) is never confirmed as it stands, at
 *   any downstream version: its document may have been built before the change. The document
 *   is rebuilt from the rows as they are now, at the row's version when that is above the
 *   downstream's, else after a bump past it; the fan-out bumps it once more when it gets there. Verify reports such a document, when no job will
 *   reach it, as `embedded` (../verify/embed-drift.ts).
 * - Drift (anti-entropy) compares live entities only: a deleted entity that is absent or a
 *   tombstone downstream, or a tombstone for a row that is gone (kept, or purged), is not drift.
 */

export type WriteOutcome = "repaired" | "forced" | "deleted_downstream";

/** What Postgres holds for one entity. */
export type PostgresState = "absent" | "live" | "deleted";

/** What the downstream holds for one entity, relative to the row's version. */
export type DownstreamCell =
  | "nothing"
  | "document_older"
  | "document_equal"
  /** A live document at the row's version whose content hash is not the row's document's. */
  | "document_other_body"
  | "document_newer"
  | "tombstone_older"
  | "tombstone_equal"
  | "tombstone_newer";

export const POSTGRES_STATES: readonly PostgresState[] = ["absent", "live", "deleted"];
export const DOWNSTREAM_CELLS: readonly DownstreamCell[] = [
  "nothing",
  "document_older",
  "document_equal",
  "document_other_body",
  "document_newer",
  "tombstone_older",
  "tombstone_equal",
  "tombstone_newer",
];

/**
 * The downstream's cell against version `v` (for a missing row, compare against 0). `content`
 * is the hash of the document built from the row: a live document at `v` with another hash is
 * "document_other_body" (without either hash, "document_equal").
 */
export function downstreamCell(ds: DownstreamState | undefined, v: number, content?: string): DownstreamCell {
  if (!ds) return "nothing";
  const rel = ds.version < v ? "older" : ds.version === v ? "equal" : "newer";
  if (!ds.deleted && rel === "equal" && !sameBody(ds, content)) return "document_other_body";
  return `${ds.deleted ? "tombstone" : "document"}_${rel}`;
}

/** Whether a live document holds the body hashed `content`; true when either hash is unknown. */
function sameBody(ds: DownstreamState, content: string | undefined): boolean {
  return ds.content === undefined || content === undefined || ds.content === content;
}

/**
 * The hash of the document `row` builds, when it decides something: a live document downstream
 * at the row's version that carries a hash of its own. Builds the document only then.
 */
function rowContent<Row>(collection: Collection<Row>, row: Row, ds: DownstreamState | undefined, v: number): string | undefined {
  if (!ds || ds.deleted || ds.version !== v || ds.content === undefined) return undefined;
  return contentHash(collection.toDocument(row));
}

export type EntityPlan =
  | { action: "confirm" }
  | {
      action: "write";
      op: SinkOperation;
      outcome: WriteOutcome;
      /** The downstream is ahead of Postgres (edited behind tether's back): bump the row to this version first. */
      bumpVersionTo?: number;
      /**
       * The downstream holds a newer version than the row, or another body at it: the rows went
       * back (a restore) or the index was edited behind tether's back. Counted for `restore_detected`.
       */
      ahead?: true;
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
  /** A row the document reads has a change whose fan-out has not reached this document yet. */
  embedPending?: boolean;
}

export function rowVersion<Row>(collection: Collection<Row>, row: Row): number {
  const v = Number((row as Record<string, unknown>)[collection.versionColumn]);
  if (!Number.isSafeInteger(v) || v < 0) throw new Error(`${collection.table}.${collection.versionColumn} is not a non-negative integer: ${String(v)}`);
  return v;
}

/** The Postgres column of the matrix for `row`. */
export function postgresState<Row>(collection: Collection<Row>, row: Row | undefined): PostgresState {
  if (row === undefined) return "absent";
  return collection.isDeleted(row) ? "deleted" : "live";
}

/** The operation that makes the downstream hold `row` (live document or tombstone). */
export function desiredOperation<Row>(collection: Collection<Row>, id: string, row: Row, version: number, force = false): SinkOperation {
  return collection.isDeleted(row)
    ? { kind: "tombstone", id, version, ...(force ? { force } : {}) }
    : { kind: "index", id, version, document: collection.toDocument(row), ...(force ? { force } : {}) };
}

/**
 * The matrix's "confirm" cells: whether the entity is confirmed as it stands, without a write.
 * Builds the row's document only to compare it with a live document at the row's version that
 * carries a content hash. Throws when the version is not one, or the document cannot be built.
 */
export function confirmsAsIs<Row>(input: PlanInput<Row>): boolean {
  const { collection, row, downstream: ds, force } = input;
  const pg = postgresState(collection, row);
  if (pg === "absent") {
    const d = input.deleteVersion ?? 0;
    return ds?.deleted ? ds.version >= d : !ds && d === 0;
  }
  if (force || !ds) return false;
  if (input.embedPending && pg === "live") return false;
  const v = rowVersion(collection, row!);
  // tombstone_equal or tombstone_newer; document_equal (the same body).
  if (pg === "deleted") return ds.deleted && ds.version >= v;
  return !ds.deleted && ds.version === v && sameBody(ds, rowContent(collection, row!, ds, v));
}

/** The matrix's "normal job" and "forced job" columns for one entity. Throws when the document cannot be built. */
export function planEntity<Row>(input: PlanInput<Row>): EntityPlan {
  const { collection, id, row, downstream: ds, force } = input;
  if (confirmsAsIs(input)) return { action: "confirm" };
  const pg = postgresState(collection, row);
  if (pg === "absent") {
    const d = input.deleteVersion ?? 0;
    const version = ds && !ds.deleted ? Math.max(ds.version + 1, d) : d;
    return { action: "write", op: { kind: "tombstone", id, version }, outcome: "deleted_downstream" };
  }
  const v = rowVersion(collection, row!);
  const cell = downstreamCell(ds, v, pg === "live" ? rowContent(collection, row!, ds, v) : undefined);
  const forced = force ? { force } : {};
  if (pg === "deleted") {
    const version = cell === "document_equal" || cell === "document_newer" || cell === "tombstone_newer" ? ds!.version + 1 : v;
    return { action: "write", op: { kind: "tombstone", id, version, ...forced }, outcome: force ? "forced" : "deleted_downstream" };
  }
  const outcome = force ? "forced" : "repaired";
  // A change still to expand: the document is rewritten from the rows as they are now; when the
  // downstream's version would refuse that write (equal or ahead), the row is raised past it first.
  // Another body at the row's version: its version was handed out twice (Postgres went back in time).
  const mustBump = cell === "document_newer" || cell === "document_other_body" || cell === "tombstone_equal" || cell === "tombstone_newer" || (input.embedPending === true && cell === "document_equal");
  if (mustBump) {
    const bumped = ds!.version + 1;
    const bumpedRow = { ...(row as Record<string, unknown>), [collection.versionColumn]: bumped } as Row;
    const ahead = cell === "document_newer" || cell === "document_other_body" || cell === "tombstone_newer" ? { ahead: true as const } : {};
    return { action: "write", op: desiredOperation(collection, id, bumpedRow, bumped), outcome, bumpVersionTo: bumped, ...ahead };
  }
  return { action: "write", op: desiredOperation(collection, id, row!, v, force), outcome };
}

/**
 * The matrix's "confirmed when" column: true when what the downstream holds now confirms `row` at
 * `version` (default: the row's). `content` is the hash of the document written (default: of the
 * row's), compared with a live document's own hash when it carries one.
 */
export function isConfirmed<Row>(collection: Collection<Row>, row: Row | undefined, ds: DownstreamState | undefined, version?: number, content?: string): boolean {
  const pg = postgresState(collection, row);
  // A hard-deleted row: a tombstone at or above the version written (any, or nothing, when none was).
  if (pg === "absent") return version === undefined ? ds === undefined || ds.deleted : ds !== undefined && ds.deleted && ds.version >= version;
  const v = version ?? rowVersion(collection, row!);
  if (pg === "deleted") return ds !== undefined && ds.deleted && ds.version >= v;
  if (ds === undefined || ds.deleted || ds.version !== v) return false;
  return sameBody(ds, content ?? rowContent(collection, row!, ds, v));
}

export type ReadBackVerdict =
  | { confirmed: true }
  | {
      confirmed: false;
      /** Why the job is retried. */
      reason: string;
      /** A delete marker refused the write: raise the row to this version (if still unchanged) before the retry. */
      bumpVersionTo?: number;
    };

/** What a read-back after `op` means for the entity's jobs. `conflictVersion` is the version a refused write reported. */
export function readBackVerdict<Row>(
  collection: Collection<Row>,
  row: Row | undefined,
  op: SinkOperation,
  after: DownstreamState | undefined,
  conflictVersion?: number,
): ReadBackVerdict {
  const written = op.kind === "index" && after?.content !== undefined ? contentHash(op.document) : undefined;
  if (isConfirmed(collection, row, after, op.kind === "delete" ? undefined : op.version, written)) return { confirmed: true };
  const other = after && !after.deleted && after.version === op.version ? " with another body" : "";
  const reason = `not confirmed on read-back: wrote ${op.kind} v${op.version}, downstream has ${after ? `${after.deleted ? "tombstone" : "document"} v${after.version}${other}` : "nothing"}`;
  const deleteMarker = !after && row !== undefined && conflictVersion !== undefined && op.kind !== "delete";
  return { confirmed: false, reason, ...(deleteMarker ? { bumpVersionTo: conflictVersion + 1 } : {}) };
}

/** How an entity differs (the matrix's "drift" column). */
export type DriftKind =
  /** Live in Postgres; absent (or a tombstone) downstream. */
  | "missing"
  /** Live on both sides at different versions (older, or edited downstream and now ahead). */
  | "stale"
  /** Live downstream; no row in Postgres. */
  | "ghost"
  /** Soft-deleted in Postgres; live downstream. */
  | "deleted_live"
  /**
   * A document behind a change of a row it embeds that no job will bring to it (a lost fan-out,
   * a document an expansion skipped): both sides agree on a version the change never moved.
   * Found from Postgres alone (../verify/embed-drift.ts).
   */
  | "embedded";

export const DRIFT_KINDS: readonly DriftKind[] = ["missing", "stale", "ghost", "deleted_live", "embedded"];

/** What Postgres holds for one entity, as anti-entropy reads it (no document needed). */
export interface RowState {
  version: number;
  live: boolean;
}

/** The matrix's "drift" column: what differs for one entity, or undefined when both sides agree. */
export function classifyDrift(pgRow: RowState | undefined, ds: DownstreamState | undefined): DriftKind | undefined {
  const cell = downstreamCell(ds, pgRow?.version ?? 0);
  const liveDown = cell.startsWith("document");
  if (!pgRow) return liveDown ? "ghost" : undefined;
  if (!pgRow.live) return liveDown ? "deleted_live" : undefined;
  if (!liveDown) return "missing";
  return cell === "document_equal" ? undefined : "stale";
}
