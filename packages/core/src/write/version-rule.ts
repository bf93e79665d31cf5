/**
 * The version rule: the version each kind of write gives an entity, whichever path it came by.
 * Pure: no I/O. The SQL function `tether.next_version(above)` (migration 000005) is the one
 * implementation every path calls (the writer's statements, the capture triggers, the drainer's
 * leapfrog); this module states what it computes, and test/capture/version-rule-sql.test.ts
 * checks that Postgres assigns exactly these versions, cell by cell.
 *
 * s = the value the version sequence hands out next (above every version handed out before, to
 * any entity, even by transactions that rolled back), o = the row's version before the write,
 * n = the version the statement itself wrote (captured SQL; absent for the writer), w = the
 * version the downstream holds. above(x) = max(s, x + 1); the sequence then stands at the result.
 *
 * | write                         | by                                                        | version             | above everything the entity used because                     |
 * | ----------------------------- | --------------------------------------------------------- | ------------------- | ------------------------------------------------------------- |
 * | insert of a new id            | createWithJob; captured INSERT, COPY, MERGE … INSERT      | above(n - 1)        | s is above every version handed out before                    |
 * | insert of an id that lived    | the same (DELETE + INSERT, one transaction or two)        | above(n - 1)        | its tombstone took a value before s: s is above it            |
 * | update keeping the key        | updateWithJob, soft delete; captured UPDATE, upsert, MERGE | above(max(o, n - 1)) | above o; the statement's own `version + 1` is replaced      |
 * | update changing the key       | captured UPDATE (the new id)                              | above(max(o, n - 1)) | the new id's old tombstone took a value before s            |
 * | tombstone                     | hard delete (writer, captured DELETE, MERGE … DELETE), a key change's old id | above(o) | above the row's last version                  |
 * | leapfrog                      | the drainer, past a document ahead of the row             | above(w)            | above w; committed before the engine is sent it               |
 * | your statement, nextVersion   | writeWithJobs with `nextVersion("version")`               | above(o)            | as an update                                                  |
 * | your statement, version + 1   | writeWithJobs with `version + 1` (capture stays out)      | o + 1               | only if o is the highest the entity used: see below           |
 * | a direct embed's change       | the writer's verbs on the embed; the embed's capture trigger (the document reached) | above(o) | as an update, in the writing transaction, under the row lock |
 * | a fan-out embed's change      | the drainer's expansion of the fan-out job (each document reached) | above(o) | as an update, in the chunk's transaction, under the row lock  |
 * | a pending embedded change     | the drainer, meeting the document before its fan-out, w ≥ o | above(max(o, w))  | as the leapfrog: above the row and what the downstream holds  |
 *
 * Why these cells:
 * - One sequence for every entity of every collection: a re-inserted id cannot know its earlier
 *   life, but any value taken after its tombstone's is above it. Counting per row (`version + 1`)
 *   started a re-inserted row again at 1, level with its old document (history 1 of issue 22).
 * - above(…) and not plain s: a row written before the sequence existed (or a document edited
 *   ahead behind tether's back) may hold more than s; the rule goes past it and moves the
 *   sequence there, so the sequence stays above every version it returned.
 * - A sequence value is never handed out twice, even when its transaction rolls back (history 5
 *   of issue 22). The drainer commits its leapfrog's bump before the engine is sent the version
 *   (the pass bumps and keeps the job due; the next pass writes): a version sent before COMMIT
 *   by a pass that then died could land after another pass confirmed the job against o, leaving
 *   a document at a version no row had. The leapfrog's bump enqueues nothing: the drained job
 *   covers it.
 * - Every cell assumes s only moves forward. A Postgres that went back in time (restored from
 *   a backup, recovered to a point in time, failed over to a lagging replica) winds s back while
 *   the engine keeps newer documents: values handed out again, possibly to the same entity. The
 *   version floor (../ops/version-floor.ts) moves s above the highest version each index holds
 *   (`tether migrate`, a drainer's start, every maintenance cycle); until it has, the drainer's
 *   content comparison (../verify/verification-matrix.ts, "another body") keeps a document
 *   written for another body at the same version from confirming the row: it leapfrogs past it.
 * - Documents from several tables (../fan-out-rule.ts): what moves when an embedded row changes
 *   is the document row's own version, taken under that row's lock (in the writing transaction
 *   for a direct embed, in the drainer's expansion otherwise), so it is above every version the
 *   document had whatever the commit order of other writers. A "greatest of the versions read"
 *   across tables would not be: a transaction holding a smaller version can commit after a
 *   larger one was read.
 * - `version + 1` in your own statement (writeWithJobs runs with the capture hand-shake, so the
 *   trigger does not replace it) is safe for an UPDATE of a row that keeps its key and whose
 *   version is the highest its entity used: every path above keeps that true, except a document
 *   written ahead of its row outside tether (then the drainer leapfrogs, as it does for any
 *   foreign edit). It is not safe for an INSERT (a re-inserted id would start below its
 *   tombstone) nor for a key change: use `nextVersion()` there. With capture on and outside
 *   writeWithJobs, the trigger replaces a statement's `version + 1` with above(o) anyway.
 */

export type VersionWrite =
  | "insert"
  | "reinsert"
  | "update"
  | "key_change"
  | "tombstone"
  | "leapfrog"
  | "own_next_version"
  | "own_plus_one"
  | "embed_direct"
  | "embed_fanout"
  | "embed_pending";

export const VERSION_WRITES: readonly VersionWrite[] = [
  "insert",
  "reinsert",
  "update",
  "key_change",
  "tombstone",
  "leapfrog",
  "own_next_version",
  "own_plus_one",
  "embed_direct",
  "embed_fanout",
  "embed_pending",
];

export interface VersionInputs {
  /** s: the value the version sequence hands out next. */
  next: number;
  /** o: the row's version before the write (not for inserts). */
  old?: number;
  /** n: the version the statement wrote itself (captured SQL); absent for the writer's own statements. */
  written?: number;
  /** w: the version the downstream holds (the leapfrog). */
  downstream?: number;
}

export interface VersionOutcome {
  /** The version the entity takes. */
  version: number;
  /** The sequence's last value afterwards (it never moves back). */
  sequence: number;
}

function above(next: number, x: number): VersionOutcome {
  const version = Math.max(next, x + 1);
  return { version, sequence: version };
}

function required(value: number | undefined, name: string, write: VersionWrite): number {
  if (value === undefined) throw new Error(`a ${write} needs ${name}`);
  return value;
}

/** The table's "version" column for one write. */
export function versionFor(write: VersionWrite, i: VersionInputs): VersionOutcome {
  const written = i.written ?? 1;
  switch (write) {
    case "insert":
    case "reinsert":
      return above(i.next, written - 1);
    case "update":
    case "key_change":
      return above(i.next, Math.max(required(i.old, "old", write), i.written === undefined ? 0 : written - 1));
    case "tombstone":
    case "own_next_version":
    case "embed_direct":
    case "embed_fanout":
      return above(i.next, required(i.old, "old", write));
    case "embed_pending":
      return above(i.next, Math.max(required(i.old, "old", write), i.downstream ?? 0));
    case "leapfrog":
      return above(i.next, required(i.downstream, "downstream", write));
    case "own_plus_one":
      // Not from the sequence: the sequence does not move.
      return { version: required(i.old, "old", write) + 1, sequence: i.next - 1 };
  }
}
