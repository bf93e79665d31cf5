import type { Collection } from "../collection.js";
import type { JobRow, SyncJobArgs } from "../job.js";
import type { DownstreamState, SinkCallOptions, SinkOperation } from "../sink.js";
import { bumpVersions, loadRows } from "../store/collection-store.js";
import { documentsWithPendingChanges } from "../store/embed-store.js";
import { recordAhead } from "../store/version-floor-store.js";
import { planEntity, readBackVerdict, rowVersion, type WriteOutcome } from "../verify/verification-matrix.js";
import type { BatchContext } from "./batch-context.js";
import type { Ledger } from "./ledger.js";
import { timeStage, timeStageSync } from "./drain-stages.js";
import { readBack } from "./read-back.js";

/**
 * One collection's share of a drain batch, as a pipeline:
 * load (rows and downstream states) → decide (the verification matrix) → write (one bulk) →
 * read back → settle (confirm, retry or park every job). With write-first (./write-first.ts)
 * the pass writes the entities a pre-read cannot change the write of before reading anything,
 * and runs the read → decide → write steps only for the ones the engine refused. Each step hands the next only the
 * entities still in play; an entity leaves the pipeline once its jobs are in the ledger.
 */

type Row = Record<string, unknown>;

/** One entity of the pass and every claimed job that names it (duplicates collapse here). */
interface Entity {
  id: string;
  jobs: JobRow[];
  force: boolean;
  /** Highest version a hard-delete job carries. */
  deleteVersion: number;
  row: Row | undefined;
  /** A row the document reads has a change whose fan-out has not reached it yet: never confirmed as it stands. */
  embedPending: boolean;
}

/** A write the matrix chose for an entity. */
interface PlannedWrite {
  entity: Entity;
  op: SinkOperation;
  outcome: WriteOutcome;
  bumpVersionTo?: number;
  /** The downstream held a newer version than the row, or another body at it. */
  ahead?: true;
  /**
   * The engine was read before this write and held a version below it (no force): reading the
   * version back then tells the write landed. A blind write (write-first) or a forced one may
   * meet a document the engine already held at that version, with another body.
   */
  versionSuffices?: boolean;
}

/** A write the downstream accepted (or refused as older): to be read back. */
interface AcceptedWrite extends PlannedWrite {
  /** The bulk reported it written (else refused as older). */
  written: boolean;
  /** The version a refused write reported the downstream holds. */
  conflictVersion?: number;
}

export async function syncCollection(ctx: BatchContext, collection: Collection<any>, jobs: { job: JobRow; args: SyncJobArgs }[], ledger: Ledger): Promise<void> {
  const writingFirst = ctx.writeFirst?.use(collection) === true;
  const entities = await load(ctx, collection, jobs);
  await ctx.loaded?.();
  const sinkOpts: SinkCallOptions = { signal: ctx.signal, retries: ctx.sinkRetries };

  let accepted: AcceptedWrite[] = [];
  let toRead = entities;
  if (writingFirst) {
    const first = await writeFirst(ctx, collection, entities, sinkOpts, ledger);
    accepted = first.accepted;
    toRead = first.toRead;
  }
  if (toRead.length > 0) accepted.push(...(await readThenWrite(ctx, collection, toRead, sinkOpts, ledger)));
  // The bulk is answered: the next pass may write while this one reads back and confirms.
  ctx.written?.();
  if (accepted.length === 0) return;

  let after: Map<string, DownstreamState>;
  try {
    after = await timeStage("readback", accepted.length, () =>
      readBack(ctx.sink, collection.index, accepted.map((w) => ({ id: w.entity.id, op: w.op, written: w.written && w.versionSuffices === true })), sinkOpts),
    );
  } catch (err) {
    ledger.retry(accepted.flatMap((w) => w.entity.jobs), `read-back failed: ${String(err)}`);
    return;
  }
  await settle(ctx, collection, accepted, after, ledger);
}

/** The matrix's path: read every entity's downstream state, decide, write what differs. */
async function readThenWrite(ctx: BatchContext, collection: Collection<any>, entities: Entity[], sinkOpts: SinkCallOptions, ledger: Ledger): Promise<AcceptedWrite[]> {
  let before: Map<string, DownstreamState>;
  try {
    before = await timeStage("verify", entities.length, () => ctx.sink.fetchStates(collection.index, entities.map((e) => e.id), sinkOpts));
  } catch (err) {
    ledger.retry(entities.flatMap((e) => e.jobs), `reading downstream failed: ${String(err)}`);
    return [];
  }
  await reloadReborn(ctx, collection, entities, before);
  const decided = timeStageSync("build", entities.length, () => decide(collection, entities, before, ledger));
  if (ctx.writeFirst) {
    // How many got the write they would have got without the read (their own version, no bump).
    const eligible = entities.filter((e) => e.row !== undefined && !e.force).length;
    const undecided = decided.filter((w) => w.entity.row !== undefined && !w.entity.force && w.bumpVersionTo === undefined && w.op.version === rowVersion(collection, w.entity.row)).length;
    ctx.writeFirst.recordRead(collection, eligible, undecided);
  }
  const planned = await leapfrog(ctx, collection, decided, ledger);
  if (planned.length === 0) return [];
  return write(ctx, collection, planned, sinkOpts, ledger);
}

/**
 * Write first (see write-first.ts): every entity with a row and no force is written as if the
 * downstream held nothing (its own version, external versioning). What the engine accepts is
 * read back like any write; what it refuses as not newer goes, with the entities this cannot
 * decide (hard deletes, forced jobs), to the matrix's read-then-write path.
 */
async function writeFirst(ctx: BatchContext, collection: Collection<any>, entities: Entity[], sinkOpts: SinkCallOptions, ledger: Ledger): Promise<{ accepted: AcceptedWrite[]; toRead: Entity[] }> {
  const toRead: Entity[] = [];
  const planned: PlannedWrite[] = [];
  timeStageSync("build", entities.length, () => {
    for (const entity of entities) {
      if (entity.row === undefined || entity.force || entity.embedPending) {
        toRead.push(entity);
        continue;
      }
      try {
        const plan = planEntity({ collection, id: entity.id, row: entity.row, downstream: undefined, force: false });
        if (plan.action === "write") planned.push({ entity, op: plan.op, outcome: plan.outcome });
        else toRead.push(entity);
      } catch (err) {
        ledger.fail(entity.jobs, `cannot build document: ${String(err)}`, true);
      }
    }
  });
  if (planned.length === 0) return { accepted: [], toRead };
  let results;
  try {
    results = await timeStage("bulk", planned.length, () => ctx.sink.write(collection.index, planned.map((w) => w.op), sinkOpts));
  } catch (err) {
    ledger.retry(planned.flatMap((w) => w.entity.jobs), `bulk write failed: ${String(err)}`);
    return { accepted: [], toRead: [] };
  }
  const accepted: AcceptedWrite[] = [];
  let conflicts = 0;
  results.forEach((res, i) => {
    const w = planned[i]!;
    if (res.status === "ok") accepted.push({ ...w, written: true });
    else if (res.status === "conflict") {
      conflicts++;
      toRead.push(w.entity);
    } else if (res.status === "retryable") ledger.retry(w.entity.jobs, res.error);
    else ledger.fail(w.entity.jobs, res.error, false);
  });
  ctx.writeFirst?.recordWrite(collection, planned.length, conflicts);
  return { accepted, toRead };
}

/**
 * Load: groups the jobs by entity and reads the rows they name, in one statement. Whole rows,
 * always: a confirmation compares the document the row builds with the content hash of the one
 * the engine holds at its version.
 */
async function load(ctx: BatchContext, collection: Collection<any>, jobs: { job: JobRow; args: SyncJobArgs }[]): Promise<Entity[]> {
  const byId = new Map<string, Entity>();
  for (const { job, args } of jobs) {
    const e = byId.get(args.id) ?? { id: args.id, jobs: [], force: false, deleteVersion: 0, row: undefined, embedPending: false };
    e.jobs.push(job);
    e.force ||= args.force === true;
    e.deleteVersion = Math.max(e.deleteVersion, args.version ?? 0);
    byId.set(args.id, e);
  }
  let rows: Map<string, Row>;
  try {
    rows = await timeStage("load", byId.size, () => loadRows(ctx.trx, collection, [...byId.keys()]));
  } catch (err) {
    throw new Error(`loading ${collection.table} rows failed: ${String(err)}`, { cause: err });
  }
  for (const e of byId.values()) e.row = rows.get(e.id);
  const entities = [...byId.values()];
  // Read after the rows: a change committed since is pending here, and the document is bumped and rewritten.
  await markPending(ctx, collection, entities);
  return entities;
}

/** Marks the entities whose document reads a row with a change still to expand (read after their rows). */
async function markPending(ctx: BatchContext, collection: Collection<any>, entities: Entity[]): Promise<void> {
  if (collection.fanoutJobName === undefined) return;
  const pending = await timeStage("load", entities.length, () => documentsWithPendingChanges(ctx.trx, collection, entities.map((e) => e.id)));
  for (const e of entities) e.embedPending = pending.has(e.id);
}

/**
 * A row loaded as absent whose downstream holds a live document is read again, after the
 * downstream: the document may be the next life of the id (inserted again after the delete this
 * job carries, committed and written by another pass after this pass loaded). Decided on the row
 * read before, the matrix would put a tombstone above that document, and the job of the new life
 * is already confirmed: a live row with a tombstone over it and no job left. Decided on the row
 * as it is now, the document is confirmed (or rewritten) as that row's.
 */
async function reloadReborn(ctx: BatchContext, collection: Collection<any>, entities: Entity[], before: ReadonlyMap<string, DownstreamState>): Promise<void> {
  const absent = entities.filter((e) => e.row === undefined && before.get(e.id)?.deleted === false);
  if (absent.length === 0) return;
  const rows = await timeStage("load", absent.length, () => loadRows(ctx.trx, collection, absent.map((e) => e.id)));
  const reborn = absent.filter((e) => rows.has(e.id));
  if (reborn.length === 0) return;
  for (const e of reborn) e.row = rows.get(e.id);
  await markPending(ctx, collection, reborn);
}

/** Decide: the verification matrix for every entity; confirmed ones settle here, the rest need a write. */
function decide(collection: Collection<any>, entities: readonly Entity[], before: ReadonlyMap<string, DownstreamState>, ledger: Ledger): PlannedWrite[] {
  const planned: PlannedWrite[] = [];
  for (const entity of entities) {
    let plan;
    try {
      plan = planEntity({ collection, id: entity.id, row: entity.row, downstream: before.get(entity.id), force: entity.force, deleteVersion: entity.deleteVersion, embedPending: entity.embedPending });
    } catch (err) {
      ledger.fail(entity.jobs, `cannot build document: ${String(err)}`, true);
      continue;
    }
    if (plan.action === "confirm") ledger.confirm(entity.jobs, "up_to_date");
    else {
      const held = before.get(entity.id)?.version ?? 0;
      const versionSuffices = !("force" in plan.op && plan.op.force === true) && held < plan.op.version;
      planned.push({ entity, op: plan.op, outcome: plan.outcome, versionSuffices, ...(plan.bumpVersionTo !== undefined ? { bumpVersionTo: plan.bumpVersionTo } : {}), ...(plan.ahead ? { ahead: plan.ahead } : {}) });
    }
  }
  return planned;
}

/**
 * The downstream holds a version Postgres never had (edited behind our back), or a document the
 * row's version cannot overwrite though it must be rewritten (a change of a row it reads is still
 * to expand): raise the row's version past it, then write in the NEXT pass. Only if the row is
 * still the one we read: a write that committed since (its direct sync is what made the
 * downstream look "ahead") must not be overwritten by our stale copy, nor a delete undone.
 * The new version comes from the version sequence (`bumpVersions`) and is sent to the engine only
 * once it is committed: this pass bumps and makes the job due again at once (no attempt counted);
 * the next one finds the row above the downstream and writes it as any other. A version sent
 * before COMMIT could reach the engine from a pass that then dies (a SIGKILL, a deadline, a bulk
 * that lands late), after another pass confirmed the job against the unbumped row: a document at
 * a version its row never had, and no job left to mend it. The bump enqueues nothing: the job
 * being drained covers it. Returns the writes that need no bump.
 */
async function leapfrog(ctx: BatchContext, collection: Collection<any>, planned: PlannedWrite[], ledger: Ledger): Promise<PlannedWrite[]> {
  const bumps = planned.filter((w) => w.bumpVersionTo !== undefined);
  if (bumps.length === 0) return planned;
  const raised = await bumpVersions(
    ctx.trx,
    collection,
    ctx.idTypes.get(collection),
    bumps.map((w) => ({ id: w.entity.id, above: w.bumpVersionTo! - 1, seen: rowVersion(collection, w.entity.row) })),
  );
  // Documents ahead of their rows, counted for restore_detected (many in a short window: the rows went back).
  const ahead = bumps.filter((w) => w.ahead && raised.has(w.entity.id)).length;
  if (ahead > 0) await recordAhead(ctx.trx, new Map([[collection.name, ahead]]));
  for (const w of bumps) {
    const version = raised.get(w.entity.id);
    if (version === undefined) ledger.retry(w.entity.jobs, "the row changed, or another transaction held it, while its repair was planned; retrying");
    else ledger.again(w.entity.jobs, `row raised to v${version} past the downstream's document; written by the next pass`);
  }
  return planned.filter((w) => w.bumpVersionTo === undefined);
}

/** Write: one bulk request; per item, read back what was accepted, retry or fail the rest. */
async function write(ctx: BatchContext, collection: Collection<any>, planned: PlannedWrite[], sinkOpts: SinkCallOptions, ledger: Ledger): Promise<AcceptedWrite[]> {
  let results;
  try {
    results = await timeStage("bulk", planned.length, () => ctx.sink.write(collection.index, planned.map((w) => w.op), sinkOpts));
  } catch (err) {
    ledger.retry(planned.flatMap((w) => w.entity.jobs), `bulk write failed: ${String(err)}`);
    return [];
  }
  const accepted: AcceptedWrite[] = [];
  results.forEach((res, i) => {
    const w = planned[i]!;
    // A write refused as older is read back too: the downstream may already hold what we wanted.
    if (res.status === "ok" || res.status === "conflict") {
      accepted.push({ ...w, written: res.status === "ok", ...(res.status === "conflict" && res.currentVersion !== undefined ? { conflictVersion: res.currentVersion } : {}) });
    } else if (res.status === "retryable") ledger.retry(w.entity.jobs, res.error);
    else ledger.fail(w.entity.jobs, res.error, false);
  });
  return accepted;
}

/** Settle: confirm what read back equal to Postgres; retry the rest, bumping past delete markers first. */
async function settle(ctx: BatchContext, collection: Collection<any>, accepted: AcceptedWrite[], after: ReadonlyMap<string, DownstreamState>, ledger: Ledger): Promise<void> {
  const markerBumps: { id: string; above: number; seen: number }[] = [];
  for (const w of accepted) {
    const verdict = readBackVerdict(collection, w.entity.row, w.op, after.get(w.entity.id), w.conflictVersion);
    if (verdict.confirmed) {
      ledger.confirm(w.entity.jobs, w.outcome);
      continue;
    }
    if (verdict.bumpVersionTo !== undefined) markerBumps.push({ id: w.entity.id, above: verdict.bumpVersionTo - 1, seen: rowVersion(collection, w.entity.row) });
    ledger.retry(w.entity.jobs, verdict.reason);
  }
  if (markerBumps.length > 0) await bumpVersions(ctx.trx, collection, ctx.idTypes.get(collection), markerBumps);
}
