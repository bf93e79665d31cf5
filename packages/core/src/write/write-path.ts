import type { Kysely, Transaction } from "kysely";
import { trace } from "@opentelemetry/api";
import type { Collection } from "../collection.js";
import { directSync, type DirectSyncOutcome, type EntityChange } from "./direct-sync.js";
import { SyncBatcher } from "./sync-batcher.js";
import { NaturalBatcher } from "./natural-batcher.js";
import { CircuitBreaker, type BreakerSnapshot, type CircuitBreakerOptions } from "./circuit-breaker.js";
import { NotFoundError, ValidationError } from "../errors.js";
import { hardDeleteRow, insertRow, loadRows, softDeleteRow, updateRow } from "../store/collection-store.js";
import { insertJobs } from "../store/job-store.js";
import { expediteJobs, notifyWake, setWriterFlag } from "../wake/wake-store.js";
import { hardDeleteRowWithJob, insertRowWithJob, softDeleteRowWithJob, updateRowWithJob, type RowJob } from "../store/row-with-job-store.js";
import { DEFAULT_LIVE_TAG, type NewJob } from "../job.js";
import { silentLogger, type Logger } from "../logger.js";
import { instruments } from "../ops/metrics.js";
import type { Sink } from "../sink.js";
import { IdGuard } from "./id-guard.js";
import { writeStages } from "./write-stages.js";
import type { EmbeddedTable } from "../embedded-table.js";
import { embedWriter, isEmbeddedTable, type EmbedWriteResult } from "./embed-writes.js";

export interface WriterOptions {
  /** Target of the direct sync after commit. Omit to leave everything to the drainer. */
  sink?: Sink;
  logger?: Logger;
  /** Timeout of the direct sync. Default 500 ms. */
  directSyncTimeoutMs?: number;
  /** How long the job waits before the drainer may take it, so it does not race the direct sync. Default 60000 ms. */
  graceMs?: number;
  /** Tag of jobs written by this writer. Default "live". */
  tag?: string;
  /** Priority of jobs written by this writer; lower runs first. Default 1. */
  priority?: number;
  /**
   * The direct sync's circuit breaker: after `failures` (5) consecutive failed or timed-out
   * direct syncs, writes stop attempting it for `cooldownMs` (5000), then one probes. `false`
   * turns it off. Default on.
   */
  breaker?: Omit<CircuitBreakerOptions, "onStateChange" | "now"> | false;
}

export interface WriteCallOptions {
  tag?: string;
  priority?: number;
  /** Skip the direct sync for this write (the drainer will do it after the grace period). */
  directSync?: boolean;
}

export interface WriteResult<Row> {
  /** The row as committed (undefined for a hard delete). */
  row: Row | undefined;
  jobIds: string[];
  /** "deferred" when the caller's transaction is still open: call `syncNow` after COMMIT. */
  sync: DirectSyncOutcome;
  changes: EntityChange<Row>[];
}

type Db = Kysely<any>;

export interface Writer {
  /**
   * Inserts a row (at the next version: see `nextVersion`) and its job in one transaction, then direct-syncs it.
   * @example
   * const { row } = await writer.createWithJob(db, annotations, { userid: "acct:ann", text: "hi" });
   */
  createWithJob<Row, Insert = Record<string, unknown>>(db: Db, collection: Collection<Row, Insert, any, any, any>, values: NoInfer<Insert>, opts?: WriteCallOptions): Promise<WriteResult<Row>>;
  /**
   * Inserts a row into a table the collection's documents read (an embed), and reaches every
   * document that embeds it, in one transaction: a direct embed's documents are bumped and
   * direct-synced, a fan-out embed's change gets one fan-out job, expanded by the drainer.
   * @example
   * await writer.createWithJob(db, products.embeds.stock, { product_id: id, quantity: 5 });
   */
  createWithJob<Row, Insert = Record<string, unknown>>(db: Db, embed: EmbeddedTable<Row, Insert, any, any>, values: NoInfer<Insert>): Promise<EmbedWriteResult<Row>>;
  /**
   * Updates a live row, bumping its version, and enqueues its job. Throws NotFoundError when no
   * live row has that id (nothing is written).
   * @example
   * await writer.updateWithJob(db, annotations, id, { text: "edited" });
   */
  updateWithJob<Row, Update = Record<string, unknown>>(db: Db, collection: Collection<Row, any, Update, any, any>, id: string, patch: NoInfer<Update>, opts?: WriteCallOptions): Promise<WriteResult<Row>>;
  /**
   * Updates one row of an embedded table by its primary key and reaches every document that
   * embeds it (both sides of a re-parent). A patch of columns no document reads reaches nothing.
   * Throws NotFoundError when there is no such row.
   * @example
   * await writer.updateWithJob(db, products.embeds.category, categoryId, { name: "Footwear" }); // one fan-out job
   */
  updateWithJob<Row, Update = Record<string, unknown>>(db: Db, embed: EmbeddedTable<Row, any, Update, any>, key: string, patch: NoInfer<Update>): Promise<EmbedWriteResult<Row>>;
  /**
   * Soft-deletes (sets the collection's deletedColumn to now() and bumps the version) or, with
   * `hard` or no deletedColumn, deletes the row; enqueues its job either way.
   * @example
   * await writer.deleteWithJob(db, annotations, id);
   */
  deleteWithJob<Row>(db: Db, collection: Collection<Row, any, any, any, any>, id: string, opts?: WriteCallOptions & { hard?: boolean }): Promise<WriteResult<Row>>;
  /**
   * Deletes one row of an embedded table by its primary key and reaches every document that
   * embedded it. Throws NotFoundError when there is no such row.
   * @example
   * await writer.deleteWithJob(db, annotations.embeds.author, "acct:ann@example.com");
   */
  deleteWithJob<Row>(db: Db, embed: EmbeddedTable<Row, any, any, any>, key: string): Promise<EmbedWriteResult<Row>>;
  /**
   * Runs `fn` (your own domain writes, which must bump versions with `nextVersion`) and enqueues
   * a job for every change it returns, in one transaction. A hard delete's change carries
   * `deletedVersion`: take it from `nextVersion` too (RETURNING it).
   * @example
   * await writer.writeWithJobs(db, annotations, async (trx) => {
   *   const rows = await trx.updateTable("annotation").set({ shared: true, version: nextVersion("version") })
   *     .where("groupid", "=", g).returningAll().execute();
   *   return rows.map((row) => ({ id: String(row.id), row }));
   * });
   */
  writeWithJobs<Row, DB = any>(db: Db, collection: Collection<Row, any, any, DB, any>, fn: (trx: Transaction<DB>) => Promise<EntityChange<Row>[]>, opts?: WriteCallOptions): Promise<WriteResult<Row>>;
  /**
   * Runs `fn` (your own statements on an embedded table) and reaches every document that embeds
   * the rows it changed, in one transaction: `fn` returns the link values its statements touched
   * (the embed's `on` column, old and new values of a row it moved).
   * @example
   * await writer.writeWithJobs(db, products.embeds.category, async (trx) => {
   *   const rows = await trx.updateTable("category").set({ name: "Footwear" }).where("name", "=", "Shoes").returning("id").execute();
   *   return rows.map((r) => r.id);
   * });
   */
  writeWithJobs<Row, DB = any>(db: Db, embed: EmbeddedTable<Row, any, any, DB>, fn: (trx: Transaction<DB>) => Promise<readonly (string | number | bigint)[]>): Promise<EmbedWriteResult<Row>>;
  /** The direct sync breaker's state (undefined without a sink or with `breaker: false`). */
  breaker(): BreakerSnapshot | undefined;
  /** The direct sync, for callers that passed their own transaction (after their COMMIT). */
  syncNow<Row>(collection: Collection<Row, any, any, any>, changes: readonly EntityChange<Row>[]): Promise<DirectSyncOutcome>;
}

function validateCallOptions(opts: WriteCallOptions | undefined): void {
  if (opts?.priority !== undefined && !Number.isInteger(opts.priority)) throw new ValidationError("priority", "must be an integer");
  if (opts?.tag !== undefined && (typeof opts.tag !== "string" || opts.tag.length === 0 || opts.tag.length > 200)) {
    throw new ValidationError("tag", "must be a non-empty string of at most 200 characters");
  }
}

/**
 * A collection with its own `load` (a document assembled from a join) gets its changed rows
 * re-read through it, in the write's transaction, so the direct sync sends the document the
 * drainer would build; one query for the whole write. A changed row `load` does not return
 * keeps the row the write returned but is left out of the direct sync (`unsynced`): its job
 * lets the drainer decide, as it would for a row that is gone.
 */
async function withLoadedRows<Row>(
  trx: Db,
  collection: Collection<Row, any, any, any>,
  changes: EntityChange<Row>[],
): Promise<{ changes: EntityChange<Row>[]; unsynced: ReadonlySet<string> }> {
  const unsynced = new Set<string>();
  if (!collection.load) return { changes, unsynced };
  const loaded = await loadRows(trx, collection as Collection<any>, changes.flatMap((c) => (c.row === undefined ? [] : [c.id])));
  const reread = changes.map((c) => {
    if (c.row === undefined) return c;
    const row = loaded.get(c.id) as Row | undefined;
    if (row === undefined) unsynced.add(c.id);
    return row === undefined ? c : { ...c, row };
  });
  return { changes: reread, unsynced };
}

/**
 * Builds the write path. Every write takes a Kysely instance or the caller's transaction: with
 * a transaction, the caller owns COMMIT and calls `syncNow` afterwards.
 *
 * @example
 * const writer = createWriter({ sink, directSyncTimeoutMs: 300 });
 * const { row } = await writer.createWithJob(db, products, { name: "Teapot", price_cents: 2450 });
 *
 * @example
 * // Inside your own transaction: the row and its job commit with the rest of your work.
 * const result = await db.transaction().execute((trx) => writer.updateWithJob(trx, products, id, { price_cents: 1990 }));
 * await writer.syncNow(products, result.changes);
 */
export function createWriter(options: WriterOptions = {}): Writer {
  const logger = options.logger ?? silentLogger;
  const timeoutMs = options.directSyncTimeoutMs ?? 500;
  const graceMs = options.graceMs ?? 60_000;
  const defaultTag = options.tag ?? DEFAULT_LIVE_TAG;
  const defaultPriority = options.priority ?? 1;
  if (!(timeoutMs > 0)) throw new ValidationError("directSyncTimeoutMs", "must be > 0");
  if (!(graceMs >= 0)) throw new ValidationError("graceMs", "must be >= 0");

  const breaker =
    options.sink && options.breaker !== false
      ? new CircuitBreaker({
          ...options.breaker,
          onStateChange: ({ from, to, consecutiveFailures }) => {
            instruments().directSyncBreaker.add(1, { to });
            const fields = { breaker: to, from, consecutiveFailures };
            if (to === "open") logger.warn(fields, "direct sync breaker open: writes leave their sync to the drainer until a probe succeeds");
            else logger.info(fields, `direct sync breaker ${to === "closed" ? "closed: direct syncs resume" : "half-open: probing"}`);
          },
        })
      : undefined;

  const ids = new IdGuard();
  // Concurrent writes' direct syncs share one _bulk while another is in flight.
  const batcher = options.sink ? new SyncBatcher(options.sink, { timeoutMs, maxOps: 1_000 }) : undefined;
  // Failed syncs' jobs are made due the same way: one statement (and one wake-up) for the writes
  // that failed while the previous one ran, not one each, when the engine hangs under load.
  const expediter = new NaturalBatcher<Db, string, undefined>({
    maxItems: 10_000,
    send: async (db, jobIds) => {
      await expediteJobs(db, jobIds);
      return jobIds.map(() => undefined);
    },
  });
  /** Never throws: the write committed; a job that stays delayed is still drained after the grace period. */
  const expedite = (db: Db, jobIds: string[]): Promise<void> =>
    writeStages
      .time("expedite", jobIds.length, () => expediter.submit(db, jobIds))
      .then(() => undefined)
      .catch((err: unknown) => logger.warn({ err: String(err) }, "could not expedite the jobs of a failed direct sync"));
  const syncNow: Writer["syncNow"] = async (collection, changes) =>
    options.sink ? directSync(options.sink, collection, changes, { timeoutMs, logger, ...(breaker ? { breaker } : {}), ...(batcher ? { batcher } : {}) }) : "skipped";

  async function run<Row>(
    db: Db,
    collection: Collection<Row, any, any, any>,
    fn: (trx: Transaction<any>) => Promise<EntityChange<Row>[]>,
    opts: WriteCallOptions | undefined,
    /**
     * One row and its job in one statement: a plain write's round trips. `loaded` when the
     * statement also ran the collection's `loadQuery` (false: it returned no row for this one);
     * a collection with only a `load` re-reads the row after the statement.
     */
    single?: (db: Db, job: RowJob) => Promise<{ change: EntityChange<Row>; jobId: string; loaded?: boolean }>,
    /** Ids the call names before anything is written: refused before the first statement. */
    known: readonly unknown[] = [],
  ): Promise<WriteResult<Row>> {
    validateCallOptions(opts);
    if (known.length > 0) await ids.check(db, collection, known);
    const tag = opts?.tag ?? defaultTag;
    const priority = opts?.priority ?? defaultPriority;
    // One statement is atomic by itself: when the writer would open a transaction only for it, it
    // runs alone (no BEGIN, no COMMIT: a third of the round trips). Not when something must follow
    // it before COMMIT: the check of an id a default other than an identity generated, or the wake
    // of due-now work (a NOTIFY that failed after an autocommit would fail a committed write).
    const alone =
      single !== undefined && !db.isTransaction && graceMs > 0 && (known.length > 0 || (await ids.generatedIdsInRule(db, collection)));
    /** The row and its job in one statement, on the caller's transaction, the writer's, or alone. */
    const oneStatement = async (q: Db) => {
      const { change, jobId, loaded } = await single!(q, { name: collection.jobName, priority, tag, delayMs: graceMs });
      if (!alone) {
        // An id generated by the table (a default) is known only now: refused, the transaction rolls back.
        await ids.check(q, collection, [change.id]);
        // Due-now work wakes drainers (as insertJobs does); grace-delayed work must not.
        if (graceMs <= 0) await notifyWake(q, collection.jobName);
      }
      // In the caller's transaction, later plain statements must be captured again.
      if (q === db && db.isTransaction) await setWriterFlag(q, "");
      // The statement read the row through the collection's loadQuery already.
      if (loaded !== undefined) return { changes: [change], jobIds: [jobId], unsynced: loaded ? new Set<string>() : new Set([change.id]) };
      // A collection with `load` builds its document from more than the row: re-read it through
      // `load`, in the transaction when there is one, else right after the statement committed
      // (a newer state is as good to send: the document carries the version it was built from).
      const { changes, unsynced } = await withLoadedRows(q, collection, [change]);
      return { changes, jobIds: [jobId], unsynced };
    };
    const body = async (trx: Transaction<any>) => {
      if (single) return oneStatement(trx);
      // The capture trigger's hand-shake: these statements bump and enqueue themselves.
      await setWriterFlag(trx, collection.name);
      const written = await fn(trx);
      await ids.check(trx, collection, written.map((c) => c.id));
      const { changes, unsynced } = await withLoadedRows(trx, collection, written);
      const jobs: NewJob[] = changes.map((c) => ({
        name: collection.jobName,
        entityId: c.id,
        priority,
        tag,
        delayMs: graceMs,
        ...(c.row === undefined && c.deletedVersion !== undefined ? { version: c.deletedVersion } : {}),
      }));
      const jobIds = await insertJobs(trx, jobs);
      // In the caller's transaction, later plain statements must be captured again.
      if (trx === db) await setWriterFlag(trx, "");
      return { changes, jobIds, unsynced };
    };
    return trace.getTracer("tether").startActiveSpan(`tether.write ${collection.name}`, async (span) => {
      try {
        const callerTx = db.isTransaction;
        const { changes, jobIds, unsynced } = alone
          ? await writeStages.time("transaction", 1, () => oneStatement(db))
          : callerTx
            ? await body(db as Transaction<any>)
            : await writeStages.time("transaction", 1, () => db.transaction().execute(body));
        instruments().jobsEnqueued.add(jobIds.length, { name: collection.jobName, tag, priority });
        const sync: DirectSyncOutcome = callerTx ? "deferred" : opts?.directSync === false ? "skipped" : await syncNow(collection, unsynced.size === 0 ? changes : changes.filter((c) => !unsynced.has(c.id)));
        // Nothing left to race: make the jobs due now and wake the drainers.
        if (sync === "error" || sync === "timeout" || sync === "breaker_open") await expedite(db, jobIds);
        return { row: changes[0]?.row, jobIds, sync, changes };
      } finally {
        span.end();
      }
    });
  }

  const idOf = <Row>(collection: Collection<Row>, row: Row) => String((row as Record<string, unknown>)[collection.idColumn]);
  const embeds = embedWriter({ graceMs, syncNow: (collection, changes) => syncNow(collection, changes), expedite });

  return {
    syncNow,
    breaker: () => breaker?.snapshot(),
    writeWithJobs(db: Db, target: any, fn: any, opts?: WriteCallOptions): Promise<any> {
      return isEmbeddedTable(target) ? embeds.write(db, target, fn) : run(db, target, fn, opts);
    },
    createWithJob(db: Db, typed: any, values: any, opts?: WriteCallOptions): Promise<any> {
      if (isEmbeddedTable(typed)) return embeds.create(db, typed, values as Record<string, unknown>);
      // Insert/Update/DB only type the call; the implementation works on plain records.
      const collection = typed as Collection<any>;
      return run(
        db,
        collection,
        async (trx) => {
          const row = (await insertRow(trx, collection, values as Record<string, unknown>)) as never;
          return [{ id: idOf(collection, row), row }];
        },
        opts,
        async (trx, job) => {
          const r = await insertRowWithJob(trx, collection, values as Record<string, unknown>, job);
          if (!r) throw new Error(`insert into ${collection.table} returned no row`);
          return { change: { id: idOf(collection, r.row), row: r.row as never }, jobId: r.jobId, ...(r.loaded !== undefined ? { loaded: r.loaded } : {}) };
        },
        (values as Record<string, unknown>)[collection.idColumn] === undefined ? [] : [(values as Record<string, unknown>)[collection.idColumn]],
      );
    },
    updateWithJob(db: Db, typed: any, id: string, typedPatch: any, opts?: WriteCallOptions): Promise<any> {
      if (isEmbeddedTable(typed)) return embeds.update(db, typed, id, typedPatch as Record<string, unknown>);
      const collection = typed as Collection<any>;
      const patch = typedPatch as Record<string, unknown>;
      if (collection.versionColumn in patch || collection.idColumn in patch) {
        throw new ValidationError(collection.versionColumn in patch ? collection.versionColumn : collection.idColumn, "is managed by tether and cannot be patched");
      }
      return run(
        db,
        collection,
        async (trx) => {
          const row = (await updateRow(trx, collection, id, patch as Record<string, unknown>)) as never;
          if (!row) throw new NotFoundError(`${collection.name} ${id}`);
          return [{ id, row }];
        },
        opts,
        async (trx, job) => {
          const r = await updateRowWithJob(trx, collection, id, patch as Record<string, unknown>, job);
          if (!r) throw new NotFoundError(`${collection.name} ${id}`);
          return { change: { id, row: r.row as never }, jobId: r.jobId, ...(r.loaded !== undefined ? { loaded: r.loaded } : {}) };
        },
        [id],
      );
    },
    deleteWithJob(db: Db, typed: any, id: string, opts?: WriteCallOptions & { hard?: boolean }): Promise<any> {
      if (isEmbeddedTable(typed)) return embeds.delete(db, typed, id);
      const collection = typed as Collection<any>;
      const soft = collection.deletedColumn !== undefined && !opts?.hard;
      return run(
        db,
        collection,
        async (trx) => {
          if (soft) {
            const row = (await softDeleteRow(trx, collection, collection.deletedColumn!, id)) as never;
            if (!row) throw new NotFoundError(`${collection.name} ${id}`);
            return [{ id, row }];
          }
          const gone = await hardDeleteRow(trx, collection, id);
          if (!gone) throw new NotFoundError(`${collection.name} ${id}`);
          return [{ id, deletedVersion: gone.tombstoneVersion }];
        },
        opts,
        async (trx, job) => {
          if (soft) {
            const r = await softDeleteRowWithJob(trx, collection, collection.deletedColumn!, id, job);
            if (!r) throw new NotFoundError(`${collection.name} ${id}`);
            return { change: { id, row: r.row as never }, jobId: r.jobId, ...(r.loaded !== undefined ? { loaded: r.loaded } : {}) };
          }
          const r = await hardDeleteRowWithJob(trx, collection, id, job);
          if (!r || r.tombstoneVersion === undefined) throw new NotFoundError(`${collection.name} ${id}`);
          return { change: { id, deletedVersion: r.tombstoneVersion }, jobId: r.jobId };
        },
        [id],
      );
    },
  };
}
