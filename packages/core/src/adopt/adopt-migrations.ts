import { captureSql } from "../capture/capture-store.js";
import type { CaptureOptions } from "../capture/capture-options.js";
import type { Collection } from "../collection.js";
import { ValidationError } from "../errors.js";
import { REINDEX_TAG_PREFIX } from "../job.js";
import type { Migration } from "../migrations/migration.js";
import { adoptDdl, initialSyncSql } from "./adopt-store.js";

export interface AdoptMigrationsOptions {
  /** Id of the first migration; the second takes the next id. */
  firstId: number;
  /** Add the collection's soft-delete column (timestamptz). Default false. */
  addDeletedColumn?: boolean;
  /** Install the capture trigger in the first migration. Default false. */
  capture?: boolean | CaptureOptions;
  /** lock_timeout of the first migration's DDL; `migrate` fails (retry it) rather than queue writers longer. Default 5000 ms. */
  lockTimeoutMs?: number;
  /** Priority and tag of the initial sync. Defaults 1000 and "reindex-adopt". */
  priority?: number;
  tag?: string;
}

/**
 * `tether adopt` as two application migrations, for teams that change schemas only through
 * migrations. Each migration is one transaction, so they are split where a long lock would
 * otherwise be held: the first adds the version column with a catalog-only default (Postgres
 * 11+), optionally the soft-delete column and the capture trigger, under a lock_timeout; the
 * second enqueues the initial sync with one INSERT … SELECT, which only reads the table and so
 * never blocks its writers (on a very large table prefer `adoptCollection`, which enqueues in
 * short batches with progress).
 *
 * @example
 * const app: MigrationSet = { namespace: "app", migrations: [...earlier, ...adoptMigrations(orders, { firstId: 12, capture: true })] };
 */
export function adoptMigrations(collection: Collection<any>, opts: AdoptMigrationsOptions): Migration[] {
  if (!Number.isInteger(opts.firstId) || opts.firstId < 1) throw new ValidationError("firstId", "must be a positive integer");
  const lockTimeoutMs = opts.lockTimeoutMs ?? 5_000;
  if (!Number.isInteger(lockTimeoutMs) || lockTimeoutMs < 1) throw new ValidationError("lockTimeoutMs", "must be a positive integer");
  if (opts.addDeletedColumn && !collection.deletedColumn) throw new ValidationError("addDeletedColumn", `collection ${collection.name} declares no deletedColumn`);
  const tag = opts.tag ?? `${REINDEX_TAG_PREFIX}-adopt`;
  if (!tag.startsWith(REINDEX_TAG_PREFIX) || !/^[A-Za-z0-9_.:-]{1,200}$/.test(tag)) throw new ValidationError("tag", `must start with "${REINDEX_TAG_PREFIX}"`);
  const priority = opts.priority ?? 1000;
  if (!Number.isInteger(priority) || priority < 0 || priority > 1_000_000) throw new ValidationError("priority", "must be an integer in 0..1000000");
  const columns = [
    `SET LOCAL lock_timeout = '${lockTimeoutMs}ms';`,
    `${adoptDdl.addVersionWithDefault(collection)};`,
    ...(opts.addDeletedColumn && collection.deletedColumn ? [`${adoptDdl.addDeletedColumn(collection, collection.deletedColumn)};`] : []),
    ...(opts.capture ? [captureSql(collection, opts.capture === true ? {} : opts.capture).enable] : []),
  ].join("\n");
  return [
    { id: opts.firstId, name: `adopt_${collection.name}_columns`, sql: columns },
    { id: opts.firstId + 1, name: `adopt_${collection.name}_initial_sync`, sql: initialSyncSql(collection, { name: collection.jobName, priority, tag }) },
  ];
}
