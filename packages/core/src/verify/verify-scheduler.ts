import { randomUUID } from "node:crypto";
import { hostname } from "node:os";
import { setTimeout as sleep } from "node:timers/promises";
import type { Kysely } from "kysely";
import type { Collection } from "../collection.js";
import { TetherError } from "../errors.js";
import { silentLogger, type Logger } from "../logger.js";
import { resolveOptions, type OptionDefaults } from "../resolve-options.js";
import type { Sink } from "../sink.js";
import { idTypeClass } from "../entity-id.js";
import { countRows, idColumnType } from "../store/collection-store.js";
import { failVerifyRun, finishVerifyRun, type VerifyMode, type VerifyRunRow } from "../store/verify-run-store.js";
import { checkpointScheduledRun, scheduledRunStates, startScheduledRun, takeOverScheduledRun } from "../store/verify-schedule-store.js";
import { deepVerifyCollection } from "./deep-verify.js";
import { embedDrift } from "./embed-drift.js";
import { verifyCollection, verifyWindows } from "./verify-collection.js";
import { scheduleDecision } from "./verify-schedule.js";
import { unsettledRestores } from "../store/version-floor-store.js";

/**
 * Anti-entropy on a schedule: the drainer's maintenance leader calls `runDue` after its passes,
 * which verifies each collection whose last completed run is older than its interval (fast, then
 * deep), one run at a time, paced, checkpointed in tether.verify_run, and resumed by whichever
 * process leads next when the one running it died (./verify-schedule.ts says when).
 */

export interface VerifyScheduleOptions {
  /** Interval between fast (bucketed) runs of each collection; 0: none. Default 3600000 (1 h). */
  fastIntervalMs?: number;
  /** Interval between deep (content) runs of each collection; 0: none. Default 86400000 (1 day). */
  deepIntervalMs?: number;
  /** Pace of a fast run, in entities compared per second (its buckets wait between windows). Default 20000. */
  documentsPerSecond?: number;
  /** Pace of a deep run, in documents read per second. Default 2000. */
  deepDocumentsPerSecond?: number;
  /** How long a run stays its process's without a checkpoint; a run whose lease passed is resumed by the next leader. Default 60000. */
  leaseMs?: number;
  /** Ids (or keys) per top-level bucket of a fast run. Default 10000. */
  bucketSize?: number;
  /** Top-level buckets per window, i.e. between two checkpoints. Default 20. */
  window?: number;
  /**
   * After a restore (a version floor check found the engine ahead of the sequence: see
   * `checkVersionFloor`), a fast run of that collection starts at once and again every this long
   * until one finishes clean. Default 300000 (5 min).
   */
  afterRestoreMs?: number;
}

export const VERIFY_SCHEDULE_DEFAULTS: OptionDefaults<VerifyScheduleOptions> = {
  fastIntervalMs: [3_600_000, "non-negative integer"],
  deepIntervalMs: [86_400_000, "non-negative integer"],
  documentsPerSecond: [20_000, "positive number"],
  deepDocumentsPerSecond: [2_000, "positive number"],
  leaseMs: [60_000, "positive integer"],
  bucketSize: [10_000, "positive integer"],
  window: [20, "positive integer"],
  afterRestoreMs: [300_000, "positive integer"],
};

/** What one scheduled run did (its process's share, and the run's totals). */
export interface ScheduledVerifyResult {
  runId: string;
  collection: string;
  mode: VerifyMode;
  status: "done" | "failed";
  /** Whether this process took the run over from a checkpoint. */
  resumed: boolean;
  /** Entities this process compared (a resumed run: after its checkpoint). */
  documentsThisProcess: number;
  /** The run's total, every process's share. */
  documentsCompared: number;
  driftedTotal: number;
  drifted: Record<string, number>;
  error?: string;
}

/** The run's lease went to another process (this one stalled past it): it stops, the other goes on. */
export class VerifyLeaseLostError extends TetherError {
  constructor(runId: string) {
    super("E_VERIFY_LEASE_LOST", `verify run ${runId}: its lease passed to another process`);
  }
}

const add = (a: Record<string, number>, b: Record<string, number>) => {
  const out = { ...a };
  for (const [k, v] of Object.entries(b)) out[k] = (out[k] ?? 0) + v;
  return out;
};

export class VerifyScheduler {
  readonly options: Required<VerifyScheduleOptions>;
  /** Identifies this process's leases. */
  readonly owner = `${hostname()}:${process.pid}:${randomUUID().slice(0, 8)}`;

  constructor(
    private readonly db: Kysely<any>,
    private readonly sink: Sink,
    private readonly collections: readonly Collection<any>[],
    opts: VerifyScheduleOptions = {},
    private readonly logger: Logger = silentLogger,
  ) {
    this.options = resolveOptions(VERIFY_SCHEDULE_DEFAULTS, opts);
  }

  /**
   * Runs every scheduled verify that is due, one after the other, and returns what each did.
   * `signal` stops the run in hand between two windows (its lease then passes and the next leader
   * resumes it); `onResult` hears of each run as it ends.
   *
   * @example
   * const scheduler = new VerifyScheduler(db, sink, [products], { fastIntervalMs: 3_600_000 });
   * for (const r of await scheduler.runDue()) if (r.driftedTotal > 0) console.warn(r);
   */
  async runDue(signal?: AbortSignal, onResult?: (r: ScheduledVerifyResult) => void): Promise<ScheduledVerifyResult[]> {
    const results: ScheduledVerifyResult[] = [];
    // Collections a restore left unsettled: their fast run is due sooner (see `afterRestoreMs`).
    const restores = new Map((await unsettledRestores(this.db)).map((r) => [r.collection, r.at]));
    for (const [mode, intervalMs] of [["fast", this.options.fastIntervalMs], ["deep", this.options.deepIntervalMs]] as const) {
      if (intervalMs <= 0) continue;
      for (const collection of this.collections) {
        signal?.throwIfAborted();
        const { now, states } = await scheduledRunStates(this.db, mode);
        const restore = mode === "fast" ? restores.get(collection.name) : undefined;
        const decision = scheduleDecision(states.get(collection.name), now, intervalMs, restore && { at: restore, intervalMs: this.options.afterRestoreMs });
        if (decision.action === "wait") continue;
        const run =
          decision.action === "start"
            ? await startScheduledRun(this.db, collection.name, mode, this.owner, this.options.leaseMs)
            : await takeOverScheduledRun(this.db, decision.runId, this.owner, this.options.leaseMs);
        if (!run) continue; // another process started or took it first
        const result = await this.run(collection, run, decision.action === "resume", signal);
        results.push(result);
        onResult?.(result);
      }
    }
    return results;
  }

  private async run(collection: Collection<any>, run: VerifyRunRow, resumed: boolean, signal?: AbortSignal): Promise<ScheduledVerifyResult> {
    const log = { runId: run.id, collection: collection.name, mode: run.mode };
    this.logger.info({ ...log, ...(resumed ? { from: run.cursor, documentsCompared: run.documentsCompared, resumes: run.resumes } : {}) }, resumed ? "verify run resumed from its checkpoint" : "verify run started");
    const base = resumed ? run : undefined;
    const result: ScheduledVerifyResult = { runId: run.id, collection: collection.name, mode: run.mode, status: "done", resumed, documentsThisProcess: 0, documentsCompared: 0, driftedTotal: 0, drifted: {} };
    try {
      const total = await countRows(this.db, collection);
      const started = performance.now();
      const pace = async (done: number, perSecond: number) => {
        const ahead = (done / perSecond) * 1000 - (performance.now() - started);
        if (ahead > 0) await sleep(ahead, undefined, signal ? { signal } : {});
      };
      const checkpoint = async (c: Parameters<typeof checkpointScheduledRun>[4]) => {
        if (!(await checkpointScheduledRun(this.db, run.id, this.owner, this.options.leaseMs, c))) throw new VerifyLeaseLostError(run.id);
      };
      let drifted: Record<string, number>;
      let driftedTotal: number;
      if (run.mode === "fast") {
        let cursor = base?.cursor ?? null;
        let buckets = { total: 0, done: 0 };
        const report = await verifyCollection(this.db, this.sink, collection, {
          bucketSize: this.options.bucketSize,
          window: this.options.window,
          // Drift a queued job already describes (a write in its grace period) is not drift.
          skipQueued: true,
          ...(cursor !== null ? { from: cursor } : {}),
          ...(signal ? { signal } : {}),
          onProgress: (p) => (buckets = { total: p.total, done: p.done }),
          onWindow: async (w) => {
            result.documentsThisProcess += w.documents;
            cursor = w.next ?? cursor;
            this.logger.debug({ ...log, documentsThisProcess: result.documentsThisProcess, next: w.next }, "verify window");
            await checkpoint({
              cursor,
              documentsCompared: (base?.documentsCompared ?? 0) + result.documentsThisProcess,
              documentsTotal: total,
              bucketsTotal: buckets.total,
              bucketsDone: buckets.done,
              bucketsCompared: (base?.bucketsCompared ?? 0) + w.report.bucketsCompared,
              bucketsDiffering: (base?.bucketsDiffering ?? 0) + w.report.bucketsDiffering,
              drifted: add(base?.drifted ?? {}, w.report.drifted),
              driftedTotal: (base?.driftedTotal ?? 0) + w.report.driftedTotal,
              enqueued: (base?.enqueued ?? 0) + w.report.enqueued,
            });
            await pace(result.documentsThisProcess, this.options.documentsPerSecond);
          },
        });
        drifted = add(base?.drifted ?? {}, report.drifted);
        driftedTotal = (base?.driftedTotal ?? 0) + report.driftedTotal;
        result.documentsCompared = (base?.documentsCompared ?? 0) + report.documentsCompared;
        await finishVerifyRun(this.db, run.id, {
          bucketsCompared: (base?.bucketsCompared ?? 0) + report.bucketsCompared,
          bucketsDiffering: (base?.bucketsDiffering ?? 0) + report.bucketsDiffering,
          drifted,
          driftedTotal,
          enqueued: (base?.enqueued ?? 0) + report.enqueued,
          samples: report.samples,
          documentsCompared: result.documentsCompared,
        });
      } else {
        const deep = await this.deepRun(collection, run, base, total, result, log, checkpoint, pace, signal);
        ({ drifted, driftedTotal } = deep);
      }
      Object.assign(result, { drifted, driftedTotal });
      this.logger[driftedTotal > 0 ? "warn" : "info"](
        { ...log, documentsCompared: result.documentsCompared, documentsThisProcess: result.documentsThisProcess, driftedTotal, drifted },
        driftedTotal > 0 ? "verify run found drift; repairs enqueued" : "verify run completed",
      );
    } catch (err) {
      result.status = "failed";
      result.error = err instanceof Error ? err.message : String(err);
      // Stopped (shutdown) or lost its lease: the run stays "running" for the next leader to resume.
      if (signal?.aborted || err instanceof VerifyLeaseLostError) {
        this.logger.info({ ...log, documentsThisProcess: result.documentsThisProcess, reason: result.error }, "verify run left to resume from its checkpoint");
      } else {
        this.logger.error({ ...log, err: result.error }, "verify run failed");
        await failVerifyRun(this.db, run.id, result.error).catch(() => undefined);
      }
    }
    return result;
  }

  /**
   * A deep run, one window of keys at a time (the fast run's windows of top-level buckets): each
   * window's documents are read by one scroll and compared with their rows, then the run
   * checkpoints where the next window starts, so a leader killed mid-run is followed by one that
   * reads again only the window in hand. A collection of uuid or text ids whose documents predate
   * the bucket key is read whole instead (no key to range over), and a run taken over starts again.
   * Orphans (documents something else wrote) are reported, never removed, by a run nobody typed.
   */
  private async deepRun(
    collection: Collection<any>,
    run: VerifyRunRow,
    base: VerifyRunRow | undefined,
    total: number,
    result: ScheduledVerifyResult,
    log: Record<string, unknown>,
    checkpoint: (c: Parameters<typeof checkpointScheduledRun>[4]) => Promise<void>,
    pace: (done: number, perSecond: number) => Promise<void>,
    signal?: AbortSignal,
  ): Promise<{ drifted: Record<string, number>; driftedTotal: number }> {
    const perSecond = this.options.deepDocumentsPerSecond;
    const idType = await idColumnType(this.db, collection);
    const hashed = idType !== undefined && idTypeClass(idType) !== "integer";
    const unkeyed = hashed ? ((await this.sink.countUnkeyed?.(collection.index)) ?? 0) : 0;
    if (unkeyed > 0) {
      this.logger.warn({ ...log, unkeyed }, `verify: ${unkeyed} document(s) predate the bucket key; the deep run reads the whole index (no checkpoint) until \`tether rebuild ${collection.name}\``);
      const report = await deepVerifyCollection(this.db, this.sink, collection, {
        keepOrphans: true,
        skipQueued: true,
        ...(signal ? { signal } : {}),
        onPage: async (p) => {
          result.documentsThisProcess = p.scanned;
          this.logger.debug({ ...log, documentsThisProcess: result.documentsThisProcess }, "verify window");
          await checkpoint({
            cursor: null, documentsCompared: p.scanned, documentsTotal: total, bucketsTotal: 0, bucketsDone: 0, bucketsCompared: 0, bucketsDiffering: 0,
            drifted: {}, driftedTotal: p.drifted, enqueued: 0,
          });
          await pace(p.scanned, perSecond);
        },
      });
      result.documentsCompared = report.scanned;
      await finishVerifyRun(this.db, run.id, { bucketsCompared: 0, bucketsDiffering: 0, drifted: report.drifted, driftedTotal: report.driftedTotal, enqueued: report.enqueued, samples: report.samples, documentsCompared: report.scanned });
      return { drifted: report.drifted, driftedTotal: report.driftedTotal };
    }

    const windows = await verifyWindows(this.db, collection, {
      bucketSize: this.options.bucketSize,
      window: this.options.window,
      ...(base?.cursor ? { from: base.cursor } : {}),
    });
    // The run's figures as of the last window done (a resumed run starts from its checkpoint's).
    const sofar = {
      documentsCompared: base?.documentsCompared ?? 0,
      drifted: base?.drifted ?? {},
      driftedTotal: base?.driftedTotal ?? 0,
      enqueued: base?.enqueued ?? 0,
    };
    const samples: Record<string, string[]> = {};
    let bucketsDone = windows.total - windows.groups.reduce((n, g) => n + g.length, 0);
    const record = (cursor: string | null) =>
      checkpoint({
        cursor, documentsCompared: sofar.documentsCompared, documentsTotal: total, bucketsTotal: windows.total, bucketsDone, bucketsCompared: 0, bucketsDiffering: 0,
        drifted: sofar.drifted, driftedTotal: sofar.driftedTotal, enqueued: sofar.enqueued,
      });
    for (const [i, group] of windows.groups.entries()) {
      const range = { from: group[0]!.from, to: group[group.length - 1]!.to };
      const before = result.documentsThisProcess;
      const report = await deepVerifyCollection(this.db, this.sink, collection, {
        range,
        keepOrphans: true,
        skipQueued: true,
        ...(signal ? { signal } : {}),
        onPage: async (p) => {
          result.documentsThisProcess = before + p.scanned;
          this.logger.debug({ ...log, documentsThisProcess: result.documentsThisProcess, from: String(range.from) }, "verify window");
          // Renews the lease mid-window; a process taking over starts this window again.
          await record(String(range.from));
          await pace(result.documentsThisProcess, perSecond);
        },
      });
      result.documentsThisProcess = before + report.scanned;
      sofar.documentsCompared += report.scanned;
      sofar.drifted = add(sofar.drifted, report.drifted);
      sofar.driftedTotal += report.driftedTotal;
      sofar.enqueued += report.enqueued;
      for (const [k, ids] of Object.entries(report.samples)) samples[k] = [...(samples[k] ?? []), ...ids].slice(0, 10);
      bucketsDone += group.length;
      const next = windows.groups[i + 1]?.[0]?.from;
      this.logger.debug({ ...log, documentsThisProcess: result.documentsThisProcess, next: next === undefined ? null : String(next) }, "verify window");
      await record(next === undefined ? null : String(next));
    }
    // Documents from several tables: what a lost fan-out left behind (Postgres only), once per run.
    const e = await embedDrift(this.db, collection, { enqueue: true, priority: 500, tag: "verify", sampleSize: 10 });
    if (e.drifted > 0) {
      sofar.drifted = add(sofar.drifted, { embedded: e.drifted });
      sofar.driftedTotal += e.drifted;
      sofar.enqueued += e.enqueued;
      samples.embedded = [...(samples.embedded ?? []), ...e.samples].slice(0, 10);
    }
    result.documentsCompared = sofar.documentsCompared;
    await finishVerifyRun(this.db, run.id, {
      bucketsCompared: 0, bucketsDiffering: 0, drifted: sofar.drifted, driftedTotal: sofar.driftedTotal, enqueued: sofar.enqueued, samples, documentsCompared: sofar.documentsCompared,
    });
    return { drifted: sofar.drifted, driftedTotal: sofar.driftedTotal };
  }
}
