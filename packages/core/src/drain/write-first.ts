import type { Collection } from "../collection.js";

/**
 * When a drain pass writes before it reads.
 *
 * The pre-read (`_mget` of every entity's state) decides something only when the downstream
 * already holds the entity at its version or newer: a write with external versioning finds that
 * out by itself, refused as a conflict. So for entities with a row and no force, a pass can
 * write first and read only the conflicts (then decided through the verification matrix as
 * before): one engine request per document fewer when most are missing or stale (a re-index,
 * a backlog after an outage). When most are current (a verify-only drain, a live queue whose
 * direct syncs succeeded) every write would come back refused and cost more than the read.
 *
 * "auto" learns it per collection, from what the passes find: a drainer starts reading first;
 * a pass whose pre-read decided nothing for most entities (each got the write it would have got
 * blind) switches the next ones to writing first; a write-first pass whose writes were mostly
 * refused switches back.
 */
export type WriteFirstMode = "auto" | "always" | "never";

/** The share (of a pass's entities) past which "auto" switches. */
const SWITCH_SHARE = 0.5;

export class WriteFirstPolicy {
  private readonly writingFirst = new Set<Collection<any>>();

  constructor(readonly mode: WriteFirstMode) {}

  /** Whether this pass of `collection` writes first. */
  use(collection: Collection<any>): boolean {
    return this.mode === "auto" ? this.writingFirst.has(collection) : this.mode === "always";
  }

  /** A read-first pass: of `eligible` entities (a row, no force), the pre-read changed the write of all but `undecided`. */
  recordRead(collection: Collection<any>, eligible: number, undecided: number): void {
    if (this.mode === "auto" && eligible > 0 && undecided / eligible > SWITCH_SHARE) this.writingFirst.add(collection);
  }

  /** A write-first pass: `conflicts` of `written` were refused as not newer. */
  recordWrite(collection: Collection<any>, written: number, conflicts: number): void {
    if (this.mode === "auto" && written > 0 && conflicts / written > SWITCH_SHARE) this.writingFirst.delete(collection);
  }
}
