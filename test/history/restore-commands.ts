import { checkVersionFloor } from "@tether/core";
import { upcomingVersion, verifyCollection } from "@tether/core/internal";
import { snapshotRepository, type SnapshotRepository } from "@tether/testkit";
import { expectPostgres, expectRelated, type HistoryCommand } from "./history-command.js";
import type { HistoryModel } from "./history-model.js";
import { checkpointPostgres, restorePostgres } from "./postgres-checkpoint.js";
import { HISTORY_COLLECTIONS, proxiesSettled, type HistorySystem } from "./history-system.js";

/**
 * Either side going back in time, as commands of a history: a checkpoint of Postgres and the
 * restore to it (the truth goes back: what was written after it is gone from the model too), a
 * snapshot of the engine's indices and the restore from it (Postgres unchanged). Each restore is
 * followed by the fast verify the drainer's schedule runs at once after it (its repairs enqueued,
 * drained by what comes next), as the runbook says: what no job names (documents of rows a
 * Postgres restore took, documents an index restore made older or brought back) is found there.
 * The end invariant is unchanged.
 */

/** The scheduled fast verify after a restore: every collection compared, repairs enqueued. */
async function verifyAfterRestore(sys: HistorySystem): Promise<void> {
  for (const c of HISTORY_COLLECTIONS) await verifyCollection(sys.db, sys.sink, c, { enqueue: true });
}

/**
 * No version an index holds may be handed out again: the sequence's next value is above the
 * highest version of every index (the version floor, after Postgres went back in time).
 */
export async function versionsHandedOutAgain(sys: HistorySystem): Promise<string[]> {
  const out: string[] = [];
  const next = await upcomingVersion(sys.db);
  for (const c of HISTORY_COLLECTIONS) {
    await sys.sink.refreshIndex?.(c.index);
    const highest = await sys.sink.highestVersion(c.index);
    if (highest !== undefined && highest >= next) out.push(`${c.name}: the index holds v${highest}, but tether.version_seq hands out v${next} next (a version the engine holds, handed out again)`);
  }
  return out;
}

/** What the history left running (a rebuild, a verify, drain passes) ends first. */
async function backgroundEnded(sys: HistorySystem): Promise<void> {
  await Promise.allSettled(sys.background.map((t) => t.done));
}

/** A restore happens with the services quiet, as an operator does it: what was left running ended, delayed requests landed. */
async function quiet(sys: HistorySystem): Promise<void> {
  await backgroundEnded(sys);
  await proxiesSettled(sys);
}

export class PostgresCheckpoint implements HistoryCommand {
  check = () => true;
  async run(m: HistoryModel, sys: HistorySystem) {
    // Not in the middle of a rebuild: a backup taken then brings back the lane the rebuild paused,
    // with no rebuild left to resume it (the runbook says what to do; the history does not).
    await backgroundEnded(sys);
    await checkpointPostgres(sys.db);
    m.pgCheckpoint = m.checkpoint();
  }
  toString = () => "Postgres checkpoint (a backup, a point in time to recover to)";
}

/**
 * When the version floor is checked after the restore: at once (`tether migrate` before the
 * services start, as the runbook says), or not before the history's own drain passes and writes
 * have met the rewound sequence (a restore nobody followed up: the drainer's start or the
 * maintenance leader checks later; here, the end check's `tether drain`).
 */
export type FloorCheck = "at once" | "later";

export class RestorePostgres implements HistoryCommand {
  constructor(readonly floor: FloorCheck) {}
  check = (m: Readonly<HistoryModel>) => m.pgCheckpoint !== undefined;
  async run(m: HistoryModel, sys: HistorySystem) {
    await quiet(sys);
    await restorePostgres(sys.db);
    m.restore(m.pgCheckpoint!);
    if (this.floor === "at once") {
      for (const c of HISTORY_COLLECTIONS) await sys.sink.refreshIndex?.(c.index);
      await checkVersionFloor({ db: sys.db, sink: sys.sink, collections: HISTORY_COLLECTIONS });
      const again = await versionsHandedOutAgain(sys);
      if (again.length > 0) throw new Error(`after the version floor check:\n  ${again.join("\n  ")}`);
    }
    await verifyAfterRestore(sys);
    await expectPostgres(sys, m, this.toString(), ["bigint", "uuid", "text"]);
    await expectRelated(sys, m, this.toString());
  }
  toString = () => `Postgres restored to its checkpoint (the sequence winds back), version floor checked ${this.floor}, then the scheduled fast verify`;
}

const repositories = new WeakMap<HistorySystem, SnapshotRepository>();

async function repositoryOf(sys: HistorySystem): Promise<SnapshotRepository> {
  let repo = repositories.get(sys);
  if (!repo) {
    repo = await snapshotRepository(sys.targets.engineUrl, `${sys.indexPrefix}snapshots`);
    repositories.set(sys, repo);
    sys.cleanups.push(() => repo!.remove());
  }
  return repo;
}

/** The concrete index behind each collection's alias (or of its name), by collection. */
async function concreteIndices(sys: HistorySystem): Promise<Map<string, string>> {
  const out = new Map<string, string>();
  for (const c of HISTORY_COLLECTIONS) {
    const layout = await sys.sink.indexLayout(c.index);
    if (layout.kind === "alias" && layout.indices.length === 1) out.set(c.name, sys.sink.indexName(layout.indices[0]!));
    else if (layout.kind === "index") out.set(c.name, sys.sink.indexName(c.index));
  }
  return out;
}

export class IndexSnapshot implements HistoryCommand {
  check = () => true;
  async run(m: HistoryModel, sys: HistorySystem) {
    const repo = await repositoryOf(sys);
    const indices = await concreteIndices(sys);
    m.indexSnapshot = { name: await repo.snapshot([...indices.values()].join(",")), indices };
  }
  toString = () => "snapshot of every index";
}

/**
 * Every index restored from the snapshot: older documents, deleted ones back, tombstones and the
 * writes since lost (as a node that lost acknowledged writes). An index a rebuild replaced since
 * is left as it is (restoring it would bring back an index nothing reads).
 */
export class RestoreIndexSnapshot implements HistoryCommand {
  check = (m: Readonly<HistoryModel>) => m.indexSnapshot !== undefined;
  async run(m: HistoryModel, sys: HistorySystem) {
    await quiet(sys);
    const repo = await repositoryOf(sys);
    const now = await concreteIndices(sys);
    for (const [collection, index] of m.indexSnapshot!.indices) {
      if (now.get(collection) === index) await repo.restore(m.indexSnapshot!.name, index);
    }
    await verifyAfterRestore(sys);
  }
  toString = () => "every index restored from the snapshot (its aliases as they were), then the scheduled fast verify";
}
