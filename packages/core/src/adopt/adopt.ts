import type { Kysely } from "kysely";
import { captureSql } from "../capture/capture-store.js";
import type { CaptureOptions } from "../capture/capture-options.js";
import type { Collection } from "../collection.js";
import { ValidationError } from "../errors.js";
import { REINDEX_TAG_PREFIX } from "../job.js";
import { notifyWake } from "../wake/wake-store.js";
import { raiseVersionFloor } from "../store/version-store.js";
import {
  adoptDdl,
  backfillVersionBatch,
  countRows,
  enqueueInitialSyncBatch,
  hasNotNullCheck,
  runDdl,
  tableColumns,
  type LockPolicy,
} from "./adopt-store.js";

export type AdoptPhase = "version" | "backfill" | "not-null" | "deleted-column" | "capture" | "enqueue";

export interface AdoptProgress {
  phase: AdoptPhase;
  /** Rows done in this phase (backfill, enqueue); 0/1 for single-statement phases. */
  done: number;
  total: number;
}

export interface AdoptOptions {
  /**
   * How a missing version column is added. "fast-default" (default): one
   * `ADD COLUMN … NOT NULL DEFAULT 1`, which Postgres 11+ records in the catalog without writing
   * a row. "backfill": add it nullable, set the default, fill existing rows in batches of
   * `batchSize` (one short transaction each), then NOT NULL through a NOT VALID check that is
   * validated while writes go on. An existing nullable version column always takes the backfill
   * route.
   */
  strategy?: "fast-default" | "backfill";
  /** Add the collection's soft-delete column (timestamptz, nullable) when missing. Default false. */
  addDeletedColumn?: boolean;
  /**
   * Install the capture trigger before the initial sync is enqueued, so writes that bypass the
   * writer during and after the adoption reach the index too. Default false.
   */
  capture?: boolean | CaptureOptions;
  /** Enqueue the initial sync (a re-index of every row). Default true. */
  enqueue?: boolean;
  /** Rows per backfill transaction and per enqueue statement. Default 10000. */
  batchSize?: number;
  /** Priority of the initial sync jobs. Default 1000 (live traffic is 1). */
  priority?: number;
  /** Tag of the initial sync jobs; must start with "reindex" so it never pages. Default "reindex-adopt". */
  tag?: string;
  /** lock_timeout of every DDL statement: the longest a writer queues behind it. Default 1000 ms. */
  lockTimeoutMs?: number;
  /** Attempts after a lock timeout before giving up. Default 30. */
  lockRetries?: number;
  onProgress?: (p: AdoptProgress) => void;
}

export interface AdoptResult {
  collection: string;
  /** How the version column was handled. */
  version: "present" | "fast-default" | "backfill";
  /** Rows whose NULL version was set by the backfill. */
  backfilled: number;
  addedDeletedColumn: boolean;
  capture: boolean;
  /** Initial sync jobs enqueued. */
  enqueued: number;
  /** DDL statements retried after a lock timeout. */
  lockRetries: number;
  durationMs: number;
}

/**
 * Adopts an existing, possibly large and live, table: adds the version column (and optionally
 * the soft-delete column) without holding a long lock, optionally installs the capture trigger,
 * and enqueues the initial sync as a low-priority re-index of every row, in batches. Safe to run
 * again: finished steps are skipped, an interrupted backfill resumes.
 *
 * @example
 * await adoptCollection(db, orders, { capture: true, onProgress: (p) => console.error(p) });
 */
export async function adoptCollection(db: Kysely<any>, collection: Collection<any>, opts: AdoptOptions = {}): Promise<AdoptResult> {
  const started = performance.now();
  const batchSize = opts.batchSize ?? 10_000;
  const priority = opts.priority ?? 1000;
  const tag = opts.tag ?? `${REINDEX_TAG_PREFIX}-adopt`;
  const strategy = opts.strategy ?? "fast-default";
  if (!Number.isInteger(batchSize) || batchSize < 1 || batchSize > 1_000_000) throw new ValidationError("batchSize", "must be an integer in 1..1000000");
  if (!Number.isInteger(priority) || priority < 0 || priority > 1_000_000) throw new ValidationError("priority", "must be an integer in 0..1000000");
  if (typeof tag !== "string" || !tag.startsWith(REINDEX_TAG_PREFIX) || tag.length > 200) throw new ValidationError("tag", `must start with "${REINDEX_TAG_PREFIX}"`);
  if (strategy !== "fast-default" && strategy !== "backfill") throw new ValidationError("strategy", 'must be "fast-default" or "backfill"');
  if (opts.addDeletedColumn && !collection.deletedColumn) throw new ValidationError("addDeletedColumn", `collection ${collection.name} declares no deletedColumn`);
  const captureSqlText = opts.capture ? captureSql(collection, opts.capture === true ? {} : opts.capture).enable : undefined;

  const result: AdoptResult = { collection: collection.name, version: "present", backfilled: 0, addedDeletedColumn: false, capture: false, enqueued: 0, lockRetries: 0, durationMs: 0 };
  const policy: LockPolicy = {
    lockTimeoutMs: opts.lockTimeoutMs ?? 1_000,
    retries: opts.lockRetries ?? 30,
    onRetry: () => (result.lockRetries += 1),
  };
  const progress = (phase: AdoptPhase, done: number, total: number) => opts.onProgress?.({ phase, done, total });

  const columns = await tableColumns(db, collection.table);
  if (!columns) throw new ValidationError("collection.table", `table ${collection.table} does not exist`);
  const idColumn = columns.get(collection.idColumn);
  if (!idColumn) throw new ValidationError("collection.idColumn", `table ${collection.table} has no column "${collection.idColumn}"`);
  const version = columns.get(collection.versionColumn);
  if (version && !/^(bigint|integer|smallint|numeric)/.test(version.type)) {
    throw new ValidationError("collection.versionColumn", `${collection.table}.${collection.versionColumn} is ${version.type}, not an integer`);
  }

  if (!version && strategy === "fast-default") {
    progress("version", 0, 1);
    await runDdl(db, adoptDdl.addVersionWithDefault(collection), policy);
    result.version = "fast-default";
    progress("version", 1, 1);
  } else if (!version || !version.notNull || (await hasNotNullCheck(db, collection))) {
    result.version = "backfill";
    progress("version", 0, 1);
    if (!version) await runDdl(db, adoptDdl.addVersionNullable(collection), policy);
    // The default first: rows inserted while the backfill runs are born with a version.
    await runDdl(db, adoptDdl.setVersionDefault(collection), policy);
    progress("version", 1, 1);
    const total = await countRows(db, collection);
    let last: string | undefined;
    let done = 0;
    progress("backfill", 0, total);
    for (;;) {
      const b = await backfillVersionBatch(db, collection, idColumn.type, last, batchSize);
      if (b.last === undefined) break;
      last = b.last;
      done += b.seen;
      result.backfilled += b.affected;
      progress("backfill", Math.min(done, total), total);
    }
    progress("not-null", 0, 1);
    if (!(await hasNotNullCheck(db, collection))) await runDdl(db, adoptDdl.addNotNullCheck(collection), policy);
    await runDdl(db, adoptDdl.validateNotNullCheck(collection), policy);
    await runDdl(db, adoptDdl.setVersionNotNull(collection), policy);
    await runDdl(db, adoptDdl.dropNotNullCheck(collection), policy);
    progress("not-null", 1, 1);
  }

  // The table's versions (old ones, or the default just added) stay below every version handed out from now on.
  await raiseVersionFloor(db, collection);

  if (opts.addDeletedColumn && collection.deletedColumn && !columns.has(collection.deletedColumn)) {
    progress("deleted-column", 0, 1);
    await runDdl(db, adoptDdl.addDeletedColumn(collection, collection.deletedColumn), policy);
    result.addedDeletedColumn = true;
    progress("deleted-column", 1, 1);
  }

  if (captureSqlText) {
    progress("capture", 0, 1);
    await runDdl(db, captureSqlText, policy);
    result.capture = true;
    progress("capture", 1, 1);
  }

  if (opts.enqueue !== false) {
    const total = await countRows(db, collection);
    const job = { name: collection.jobName, priority, tag };
    let last: string | undefined;
    progress("enqueue", 0, total);
    for (;;) {
      const b = await enqueueInitialSyncBatch(db, collection, idColumn.type, job, last, batchSize);
      if (b.last === undefined) break;
      last = b.last;
      result.enqueued += b.affected;
      progress("enqueue", Math.min(result.enqueued, Math.max(total, result.enqueued)), Math.max(total, result.enqueued));
    }
    if (result.enqueued > 0) await notifyWake(db, collection.jobName);
  }
  result.durationMs = performance.now() - started;
  return result;
}
