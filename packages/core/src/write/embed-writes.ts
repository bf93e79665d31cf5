import type { Kysely, Transaction } from "kysely";
import type { Collection } from "../collection.js";
import type { EmbeddedTable } from "../embedded-table.js";
import { NotFoundError, ValidationError } from "../errors.js";
import { embedChangeEffect, type EmbedChangeOp } from "../fan-out-rule.js";
import { loadRows } from "../store/collection-store.js";
import { bumpDirectDocuments, deleteEmbedRow, insertEmbedRow, recordFanouts, updateEmbedRow } from "../store/embed-store.js";
import type { DirectSyncOutcome, EntityChange } from "./direct-sync.js";

type Db = Kysely<any>;
type Row = Record<string, unknown>;

/** What a write to an embedded table did. */
export interface EmbedWriteResult<Row> {
  /** The embedded row as committed (undefined for a delete). */
  row: Row | undefined;
  /** The jobs enqueued: the documents' sync jobs (a direct embed) or the fan-out jobs. */
  jobIds: string[];
  /** The documents bumped in this transaction (a direct embed), as their direct sync sends them. */
  changes: EntityChange<Record<string, unknown>>[];
  /** Fan-out jobs enqueued: the drainer reaches those documents. */
  fanouts: number;
  /** The direct sync of the bumped documents ("skipped" for a fan-out, "deferred" in the caller's transaction). */
  sync: DirectSyncOutcome;
}

/** What the writer lends the embed path: its direct sync, its grace period and its expediter. */
export interface EmbedWriteDeps {
  graceMs: number;
  syncNow(collection: Collection<any>, changes: readonly EntityChange<Record<string, unknown>>[]): Promise<DirectSyncOutcome>;
  /** Makes the jobs of a failed direct sync due now (nothing is left to race), as the writer's own verbs do. */
  expedite(db: Db, jobIds: string[]): Promise<void>;
}

/** True when the writer's target is an embedded table rather than a collection. */
export function isEmbeddedTable(target: unknown): target is EmbeddedTable<any, any, any, any> {
  return typeof target === "object" && target !== null && "linkColumn" in target && "owner" in target;
}

/**
 * The embed's collection: the object `defineCollection` built, whose embeds these are (an
 * `EmbeddedTable` refers to it by the structural `EmbedOwner`, to keep the import graph acyclic).
 */
const ownerOf = (embed: EmbeddedTable<any, any, any, any>) => embed.owner as unknown as Collection<any>;

/**
 * The documents a change of `embed` touched (its link values), in the write's transaction: a
 * direct embed's documents are bumped and get their sync jobs (due after the grace period: the
 * direct sync follows COMMIT), a fan-out embed's change is recorded with one fan-out job per
 * link value. Returns the jobs, and the bumped documents re-read through the collection's `load`.
 */
async function reachDocuments(trx: Db, embed: EmbeddedTable<any, any, any, any>, links: string[], op: EmbedChangeOp, graceMs: number) {
  const collection = ownerOf(embed);
  if (links.length === 0) return { jobIds: [] as string[], changes: [] as EntityChange<Row>[], fanouts: 0 };
  if (!embed.direct) {
    const jobIds = await recordFanouts(trx, collection, embed, links, op);
    return { jobIds, changes: [] as EntityChange<Row>[], fanouts: jobIds.length };
  }
  const bumped = await bumpDirectDocuments(trx, collection, embed, links, { op, delayMs: graceMs });
  const rows = await loadRows(trx, collection, bumped.map((b) => b.id));
  const changes = bumped.flatMap((b) => (rows.has(b.id) ? [{ id: b.id, row: rows.get(b.id)! }] : []));
  return { jobIds: bumped.map((b) => b.jobId), changes, fanouts: 0 };
}

/**
 * The writer's verbs on an embedded table: write the row (its own capture triggers stay out of
 * the way), reach the documents it is embedded in by the fan-out rule, all in one transaction
 * (yours if you pass one), then direct-sync the documents a direct embed bumped.
 */
export function embedWriter(deps: EmbedWriteDeps) {
  async function run<R>(db: Db, embed: EmbeddedTable<any, any, any, any>, op: EmbedChangeOp, write: (trx: Db) => Promise<{ row: R | undefined; links: string[] }>): Promise<EmbedWriteResult<R>> {
    const callerTx = db.isTransaction;
    const body = async (trx: Db) => {
      const { row, links } = await write(trx);
      return { row, ...(await reachDocuments(trx, embed, links, op, deps.graceMs)) };
    };
    const done = callerTx ? await body(db) : await db.transaction().execute((trx) => body(trx));
    const sync: DirectSyncOutcome = callerTx ? "deferred" : done.changes.length === 0 ? "skipped" : await deps.syncNow(ownerOf(embed), done.changes);
    if (sync === "error" || sync === "timeout" || sync === "breaker_open") await deps.expedite(db, done.jobIds);
    return { row: done.row, jobIds: done.jobIds, changes: done.changes, fanouts: done.fanouts, sync };
  }

  return {
    create<R>(db: Db, embed: EmbeddedTable<R, any, any, any>, values: Row): Promise<EmbedWriteResult<R>> {
      return run(db, embed, "insert", async (trx) => {
        const { row, links } = await insertEmbedRow(trx, embed, values);
        return { row: row as R, links };
      });
    },
    update<R>(db: Db, embed: EmbeddedTable<R, any, any, any>, key: string, patch: Row): Promise<EmbedWriteResult<R>> {
      if (Object.keys(patch).length === 0) throw new ValidationError("patch", "must change at least one column");
      return run(db, embed, "update", async (trx) => {
        const r = await updateEmbedRow(trx, embed, key, patch);
        if (!r) throw new NotFoundError(`${embed.table} ${key}`);
        const changed = embedChangeEffect(embed, { op: "update", changedColumns: Object.keys(patch), keyChanged: embed.primaryKey in patch, before: r.links[0] ?? null, after: r.links[1] ?? r.links[0] ?? null });
        return { row: r.row as R, links: changed.action === "nothing" ? [] : changed.links };
      });
    },
    delete<R>(db: Db, embed: EmbeddedTable<R, any, any, any>, key: string): Promise<EmbedWriteResult<R>> {
      return run(db, embed, "delete", async (trx) => {
        const r = await deleteEmbedRow(trx, embed, key);
        if (!r) throw new NotFoundError(`${embed.table} ${key}`);
        return { row: undefined as R | undefined, links: r.links };
      });
    },
    write<R, DB>(db: Db, embed: EmbeddedTable<R, any, any, DB>, fn: (trx: Transaction<DB>) => Promise<readonly (string | number | bigint)[]>): Promise<EmbedWriteResult<R>> {
      return run(db, embed, "update", async (trx) => ({ row: undefined as R | undefined, links: [...new Set((await fn(trx as Transaction<DB>)).map(String))] }));
    },
  };
}
