import type { AnyEmbeddedTable as EmbeddedTable } from "./embedded-table.js";

/**
 * The fan-out rule: which documents a change to an embedded table reaches, what moves their
 * versions, and where the work happens. Pure: no I/O. The capture triggers
 * (capture/embed-capture-store.ts), the writer's verbs on an embed (write/embed-writes.ts), the
 * drainer's expansion (drain/fan-out-pass.ts) and verify (verify/embed-drift.ts) all follow it;
 * test/embeds/fan-out-rule-sql.test.ts checks the SQL against each row.
 *
 * A change is keyed by the link values it touched (the embed's `on` column in the changed row):
 *
 * | change to a row of embedded table E          | link values touched       | direct E (the link is the document's id)                 | fan-out E (any other link)                                      |
 * | -------------------------------------------- | ------------------------- | -------------------------------------------------------- | --------------------------------------------------------------- |
 * | INSERT                                       | the new row's             | bump those documents, enqueue their sync jobs: in the writing transaction | record the change (embed_change), enqueue one fan-out job per value: in the writing transaction |
 * | UPDATE of a read column (`columns`)          | the row's                 | the same                                                 | the same                                                        |
 * | UPDATE of the link column (a re-parent)      | the old and the new value | the same, both documents                                 | the same, both values                                           |
 * | UPDATE of a column an upper level joins on   | the row's                 | the same                                                 | the same                                                        |
 * | UPDATE of the primary key                    | the old and the new value | the same (a delete plus an insert)                       | the same                                                        |
 * | UPDATE of columns no document reads          | none                      | nothing                                                  | nothing                                                         |
 * | DELETE                                       | the old row's             | bump those documents                                     | record the change, one fan-out job per value                    |
 * | a NULL link value                            | none on that side         | —                                                        | —                                                               |
 *
 * What happens to a fan-out job, and to the documents a pending change reaches:
 *
 * | when                                              | what                                                                                   | in which transaction                           |
 * | ------------------------------------------------- | -------------------------------------------------------------------------------------- | ---------------------------------------------- |
 * | a drainer claims the fan-out job                  | the next chunk of live documents reached (in id order): each bumped, a sync job each   | one short transaction per chunk (resumable)     |
 * | the chunk comes back short                        | the change is expanded (`expanded = version`), the fan-out job deleted                 | the same                                       |
 * | a newer change of the same link value exists      | the older fan-out job is deleted unexpanded: the newer one reaches the same documents  | the same                                       |
 * | a drain pass meets a document with a pending change | it bumps the document and rewrites it (never confirms it as it stands)               | the drain pass                                 |
 * | `tether verify` meets a pending change with no job | it re-enqueues the fan-out (drift kind `embedded`)                                    | verify                                         |
 * | `tether verify` meets a live document below an expanded change | it bumps the document and enqueues its sync job (drift kind `embedded`)   | verify                                         |
 *
 * Why these cells:
 * - A direct change reaches exactly one document per changed row, so the writing transaction can
 *   afford to bump it: the document's version moves atomically with the change, as for a write
 *   to the document's own table, and a lost job is found by the version comparison of verify.
 * - A fan-out change may reach millions of documents: the writing transaction pays one row and
 *   one job per changed link value, whatever that number. The documents' versions move when the
 *   drainer expands it, each under its own row lock: a version taken there is above every
 *   version the document had, whatever the commit order of other writers (a version taken from
 *   a "greatest of the versions read" would not be: a transaction holding a smaller version can
 *   commit after a larger one was read, and the document would keep a version its new content
 *   does not have).
 * - Until then the change is pending in tether.embed_change, which a drain pass reads for the
 *   documents it handles: it never confirms a document built before a change that committed.
 * - Soft-deleted documents are not reached: their document is a tombstone that embeds nothing.
 */

export type EmbedChangeOp = "insert" | "update" | "delete";

/** What one change of an embedded row does, by the rule above. */
export type EmbedEffect = { action: "nothing" } | { action: "bump_documents" | "fan_out"; links: string[] };

export interface EmbedChange {
  op: EmbedChangeOp;
  /** The link value before the change (UPDATE, DELETE), as text. */
  before?: string | null;
  /** The link value after the change (INSERT, UPDATE), as text. */
  after?: string | null;
  /** The columns an UPDATE changed (or set); omitted when unknown: then it counts as a change. */
  changedColumns?: readonly string[];
  /** The primary key changed (an UPDATE). */
  keyChanged?: boolean;
}

/** The link values a change touched, by the rule's first table. */
export function touchedLinks(embed: EmbeddedTable, change: EmbedChange): string[] {
  const values = change.op === "insert" ? [change.after] : change.op === "delete" ? [change.before] : [change.before, change.after];
  if (change.op === "update" && !change.keyChanged && change.changedColumns !== undefined && embed.watched !== undefined) {
    const counted = new Set(embed.watched);
    if (!change.changedColumns.some((c) => counted.has(c))) return [];
  }
  return [...new Set(values.filter((v): v is string => v !== null && v !== undefined))];
}

/** The rule for one change of `embed`'s rows. */
export function embedChangeEffect(embed: EmbeddedTable, change: EmbedChange): EmbedEffect {
  const links = touchedLinks(embed, change);
  if (links.length === 0) return { action: "nothing" };
  return { action: embed.direct ? "bump_documents" : "fan_out", links };
}
