import { EventEmitter } from "node:events";
import type { Kysely } from "kysely";
import { SpanStatusCode, trace } from "@opentelemetry/api";
import type { BackoffOptions } from "./backoff.js";
import type { Collection } from "../collection.js";
import { processBatch, emptyCounts, type DrainCounts } from "./drain-batch.js";
import { publishStage, timeStage } from "./drain-stages.js";
import { DeadlineExceededError, ValidationError } from "../errors.js";
import { resolveOptions } from "../resolve-options.js";
import { idColumnType } from "../store/collection-store.js";
import { claimBatch, sweepExpired, type SweptLane } from "../store/job-store.js";
import type { JobRow } from "../job.js";
import { recordCompletions, type CompletionCount } from "../store/job-stat-store.js";
import { silentLogger, type Logger } from "../logger.js";
import { instruments } from "../ops/metrics.js";
import { WakeListener, type WakeListenerOptions } from "../wake/wake-listener.js";
import { WriteFirstPolicy } from "./write-first.js";
import { EngineTurns, runPipeline, type ClaimedBatch, type EngineTurn } from "./pass-pipeline.js";
import { expandFanouts, type FanoutCounts, type FanoutPassResult } from "./fan-out-pass.js";

import { checkVersionFloor } from "../ops/version-floor.js";
import { DRAINER_DEFAULTS, type DrainerEvents, type DrainerOptions, type DrainResult, type PassReason } from "./drainer-options.js";

export { DRAINER_DEFAULTS, type DrainerEvents, type DrainerOptions, type DrainResult, type PassReason } from "./drainer-options.js";

const withoutCompletions = ({ completions: _c, ...rest }: FanoutPassResult): FanoutCounts => rest;

/**
 * The verifying reconciler. `drainOnce()` runs one pass; `start()` runs passes on an interval,
 * at once again while passes come back full. Emits "batch", "error" and "stopped" so tests
 * wait on signals, not on sleeps.
 *
 * @example
 * const drainer = new Drainer({ db, sink, collections: [annotations] });
 * const result = await drainer.drainOnce(); // { claimed, up_to_date, repaired, ... }
 */
export class Drainer extends EventEmitter<DrainerEvents> {
  /** Drainers whose loop is running in this process (tests fail when one is left behind). */
  static readonly active = new Set<Drainer>();
  readonly options: Required<Omit<DrainerOptions, "logger" | "backoff" | "listen">> & { logger: Logger; backoff: BackoffOptions; listen: WakeListenerOptions | undefined };
  private readonly byName: Map<string, Collection<any>>;
  private loop: Promise<void> | undefined;
  private stopping = false;
  private wake: (() => void) | undefined;
  /** "running" from a run's first pass to its last one's end; a wake-up then asks for one more pass. */
  private phase: "idle" | "running" | "waking" = "idle";
  private wakePending = false;
  private listener: WakeListener | undefined;
  private readonly writeFirst: WriteFirstPolicy;
  private readonly fanoutCollections: readonly Collection<any>[];

  constructor(opts: DrainerOptions) {
    super();
    const o = {
      db: opts.db,
      sink: opts.sink,
      collections: opts.collections,
      logger: opts.logger ?? silentLogger,
      backoff: opts.backoff ?? {},
      ...resolveOptions(DRAINER_DEFAULTS, opts),
      listen: opts.listen,
    };
    this.options = o;
    this.writeFirst = new WriteFirstPolicy(o.writeFirst);
    this.byName = new Map();
    this.fanoutCollections = o.collections.filter((c) => c.fanoutJobName !== undefined);
    for (const c of o.collections) {
      if (this.byName.has(c.jobName)) throw new ValidationError("collections", `two collections use job name "${c.jobName}"`);
      this.byName.set(c.jobName, c);
    }
  }

  private idTypeCache: Map<Collection<any>, string | undefined> | undefined;

  /** Id column types, looked up once (a missing table is looked up again next pass). */
  private async idTypes(): Promise<Map<Collection<any>, string | undefined>> {
    if (this.idTypeCache && [...this.idTypeCache.values()].every((t) => t !== undefined)) return this.idTypeCache;
    const m = new Map<Collection<any>, string | undefined>();
    for (const c of this.options.collections) m.set(c, await idColumnType(this.options.db, c));
    this.idTypeCache = m;
    return m;
  }

  /** Moves expired jobs to the dead-letter table (its own short transaction). */
  async sweep(now?: Date): Promise<number> {
    // Expired rows sit at the front of the claim index (oldest scheduled_at) and would be
    // filtered one by one by every claim: move them all out now, in bounded chunks, within a
    // time budget, so the claim that follows stays flat.
    const budgetEnds = performance.now() + this.options.sweepBudgetMs;
    let total = 0;
    for (;;) {
      const moved = await sweepExpired(this.options.db, { limit: this.options.sweepLimit, ...(now ? { now } : {}) });
      if (moved.length === 0) break;
      await recordCompletions(this.options.db, moved.map((m) => ({ ...m, outcome: "expired" as const })));
      const n = moved.reduce((a, m) => a + m.count, 0);
      total += n;
      for (const m of moved) instruments().jobsCompleted.add(m.count, { name: m.name, tag: m.tag, priority: m.priority, outcome: "expired" });
      this.options.logger.warn({ expired: moved }, "moved expired jobs to the dead-letter table");
      if (n < this.options.sweepLimit || performance.now() > budgetEnds) break;
    }
    return total;
  }

  /**
   * Claims a batch, sweeping the expired jobs the claim meets: while a claim swept some and the
   * batch is not full, claims again (within the sweep budget), so a pass never comes back
   * empty-handed from a queue whose front is expired.
   */
  private async claim(trx: Kysely<any>, now: Date | undefined): Promise<{ jobs: JobRow[]; expired: SweptLane[] }> {
    const o = this.options;
    const budgetEnds = performance.now() + o.sweepBudgetMs;
    const jobs: JobRow[] = [];
    const expired: SweptLane[] = [];
    for (let first = true; ; first = false) {
      const r = await claimBatch(trx, {
        limit: o.batchSize - jobs.length,
        ...(first ? { deadlineMs: o.deadlineMs } : { exclude: jobs.map((j) => j.id) }),
        ...(now ? { now } : {}),
      });
      jobs.push(...r.jobs);
      expired.push(...r.expired);
      if (r.expired.length === 0 || jobs.length >= o.batchSize || performance.now() > budgetEnds) return { jobs, expired };
    }
  }

  /** One pass: claim a batch (sweeping expired jobs on the way), verify, repair, confirm. Never throws. */
  drainOnce(opts: { now?: Date } = {}): Promise<DrainResult> {
    return this.pass(opts, () => undefined, new EngineTurns(1).turn());
  }

  /**
   * A pass that tells `loaded` what it claimed once its batch is loaded (or once it ends, if it
   * never gets there), then takes `turn` before its engine requests and gives it back once its
   * bulk is answered.
   */
  private async pass(opts: { now?: Date }, loaded: (c: ClaimedBatch) => void, turn: EngineTurn): Promise<DrainResult> {
    const o = this.options;
    const started = performance.now();
    const tracer = trace.getTracer("tether");
    let claim: ClaimedBatch = { claimed: 0, expired: 0 };
    return tracer.startActiveSpan("tether.drain_batch", async (span) => {
      let counts = emptyCounts();
      let fanout: FanoutPassResult | undefined;
      let error: string | undefined;
      try {
        // Everything read from the pool happens before the transaction takes its connection:
        // a pass must never wait for a second connection while holding one (N passes, pool of N).
        const idTypes = await this.idTypes();
        fanout = await this.expand();
        const controller = new AbortController();
        let timer: NodeJS.Timeout | undefined;
        const completions: CompletionCount[] = [];
        let swept: SweptLane[] = [];
        try {
          let batchDone: number | undefined;
          counts = await o.db.transaction().execute(async (trx) => {
            // From the moment the pass holds its connection (a pass started ahead may wait for one).
            timer = setTimeout(() => controller.abort(new DeadlineExceededError(o.deadlineMs)), o.deadlineMs);
            const { jobs, expired } = await timeStage("claim", o.batchSize, () => this.claim(trx, opts.now));
            swept = expired;
            claim = { claimed: jobs.length, expired: expired.reduce((a, m) => a + m.count, 0) };
            if (jobs.length === 0) return emptyCounts();
            const ids = jobs.map((j) => j.id);
            this.emit("claimed", ids);
            try {
              const batch = await processBatch(
                { trx, sink: o.sink, collections: this.byName, idTypes, signal: controller.signal, maxAttempts: o.maxAttempts, backoff: o.backoff, sinkRetries: o.sinkRetries, logger: o.logger, completions, entityEvents: o.entityEvents, writeFirst: this.writeFirst, loaded: () => (loaded(claim), turn.take(controller.signal)), written: () => turn.give() },
                jobs,
              );
              batchDone = performance.now();
              return batch;
            } finally {
              this.emit("releasing", ids);
            }
          });
          if (batchDone !== undefined) publishStage("commit", batchDone, counts.claimed);
          counts.expired = claim.expired;
          if (swept.length > 0) o.logger.warn({ expired: swept }, "moved expired jobs to the dead-letter table");
          // Counted only once the batch committed: a rolled-back batch completed nothing.
          for (const m of swept) completions.push({ ...m, outcome: "expired" });
          for (const c of completions) instruments().jobsCompleted.add(c.count, { name: c.name, tag: c.tag, priority: c.priority, outcome: c.outcome });
        } finally {
          clearTimeout(timer);
        }
      } catch (err) {
        error = err instanceof Error ? err.message : String(err);
        o.logger.error({ err: error }, "drain pass failed; its jobs stay due");
        span.setStatus({ code: SpanStatusCode.ERROR, message: error });
      }
      loaded(claim);
      turn.give();
      const durationMs = performance.now() - started;
      instruments().drainBatchDuration.record(durationMs / 1000);
      span.setAttributes({ "tether.claimed": counts.claimed, "tether.parked": counts.parked, "tether.retried": counts.retried });
      span.end();
      const result: DrainResult = { ...counts, durationMs, ...(fanout ? { fanout: withoutCompletions(fanout) } : {}), ...(error ? { error } : {}) };
      this.emit("batch", result);
      return result;
    });
  }

  /** Expands due fan-out jobs (see fan-out-pass.ts), when some collection has fan-out embeds. */
  private async expand(): Promise<FanoutPassResult | undefined> {
    const o = this.options;
    if (this.fanoutCollections.length === 0) return undefined;
    const r = await timeStage("fanout", o.fanoutChunkSize, () =>
      expandFanouts({ db: o.db, collections: this.fanoutCollections, chunkSize: o.fanoutChunkSize, claimLimit: o.batchSize, deadlineMs: o.deadlineMs, maxAttempts: o.maxAttempts, backoff: o.backoff, logger: o.logger }),
    );
    for (const c of r.completions) instruments().jobsCompleted.add(c.count, { name: c.name, tag: c.tag, priority: c.priority, outcome: c.outcome });
    return r;
  }

  /** Drains until a pass claims nothing (or `maxPasses`), returning the summed counts. */
  async drainUntilEmpty(opts: { maxPasses?: number; onPass?: (r: DrainResult) => void } = {}): Promise<DrainResult> {
    await this.checkFloor();
    const total: DrainResult = { ...emptyCounts(), durationMs: 0 };
    const started = performance.now();
    let passes = 0;
    for (;;) {
      const left = (opts.maxPasses ?? Number.POSITIVE_INFINITY) - passes;
      if (left <= 0) break;
      const results = await this.run(left, () => false, () => undefined, (r) => {
        for (const k of Object.keys(emptyCounts()) as (keyof DrainCounts)[]) total[k] += r[k];
        opts.onPass?.(r);
      });
      passes += results.length;
      total.durationMs = performance.now() - started;
      const failed = results.find((r) => r.error);
      if (failed) return { ...total, error: failed.error! };
      if (results.every((r) => r.claimed === 0 && r.expired === 0 && !r.fanout?.claimed)) break;
      // Passes that only retried (nothing confirmed, nothing parked) would spin: stop and let the backoff work.
      if (results.every((r) => r.claimed === r.retried && r.claimed < this.options.batchSize && r.expired === 0)) break;
    }
    return total;
  }

  /**
   * The version floor (`DrainerOptions.versionFloor`): never throws; a failed check is logged
   * and left to the next start and to the maintenance leader.
   */
  private async checkFloor(): Promise<void> {
    if (!this.options.versionFloor) return;
    try {
      const results = await checkVersionFloor({ db: this.options.db, sink: this.options.sink, collections: this.options.collections, logger: this.options.logger, call: { retries: this.options.sinkRetries } });
      this.emit("versionFloor", results);
    } catch (err) {
      this.options.logger.warn({ err: String(err) }, "version floor check failed; the maintenance leader checks again each cycle");
    }
  }

  /**
   * Passes one batch ahead (see pass-pipeline.ts), `concurrency` at the engine at a time, until
   * one comes back short; `starting(n)` is told before the n-th starts.
   */
  private run(maxPasses: number, stopping: () => boolean, starting: (n: number) => void, onResult?: (r: DrainResult) => void): Promise<DrainResult[]> {
    return runPipeline<DrainResult>({
      width: this.options.concurrency,
      maxPasses,
      full: (c) => c.claimed >= this.options.batchSize || c.expired > 0,
      failed: (r) => r.error !== undefined,
      stopping,
      start: (n, turn) => {
        starting(n);
        let tell!: (c: ClaimedBatch) => void;
        const loaded = new Promise<ClaimedBatch>((resolve) => (tell = resolve));
        return { loaded, done: this.pass({}, tell, turn) };
      },
      ...(onResult ? { onResult } : {}),
    });
  }

  /** Starts the loop. Passes run back to back, one batch ahead (see `concurrency`), while they come back full. */
  start(): void {
    if (this.loop) return;
    Drainer.active.add(this);
    this.stopping = false;
    if (this.options.listen) this.startListener(this.options.listen);
    this.loop = (async () => {
      await this.checkFloor();
      let reason: PassReason = "start";
      while (!this.stopping) {
        this.phase = "running";
        this.wakePending = false;
        const first = reason;
        const results = await this.run(Number.POSITIVE_INFINITY, () => this.stopping, (n) => this.emit("pass", n === 0 ? first : "full"));
        // A failed pass is logged and retried by the loop; an "error" event nobody listens to
        // would throw and kill the process (the very outage the loop exists to ride out).
        for (const r of results) if (r.error && this.listenerCount("error") > 0) this.emit("error", new Error(r.error));
        if (this.stopping) break;
        // Wake-ups during the run may describe work it claimed before they arrived, or not:
        // one more pass settles it, however many arrived (coalesced).
        if (this.wakePending) {
          reason = "wake";
          continue;
        }
        // A fan-out left work due now (the rest of its documents, or the sync jobs it enqueued).
        if (results.some((r) => r.fanout?.more || (r.fanout?.expanded ?? 0) > 0)) {
          reason = "fanout";
          continue;
        }
        const jitter = 1 + (Math.random() * 2 - 1) * this.options.intervalJitter;
        reason = "interval";
        this.phase = "idle";
        await new Promise<void>((resolve) => {
          const t = setTimeout(resolve, Math.max(0, this.options.intervalMs * jitter));
          this.wake = () => {
            clearTimeout(t);
            reason = "wake";
            resolve();
          };
        });
        this.wake = undefined;
      }
      this.phase = "idle";
    })();
  }

  private startListener(opts: WakeListenerOptions): void {
    const listener = new WakeListener({ ...opts, logger: opts.logger ?? this.options.logger });
    this.listener = listener;
    listener.on("notification", (payload) => {
      this.emit("wake", { source: "notify", payload });
      this.poke();
    });
    let first = true;
    listener.on("listening", () => {
      this.emit("listening");
      // Notifications sent while the session was down are gone: look for due work once.
      if (!first) {
        this.emit("wake", { source: "listening", payload: "" });
        this.poke();
      }
      first = false;
    });
    void listener.start();
  }

  /**
   * Runs the next pass now (a LISTEN/NOTIFY wake-up, an admin request). Coalesced: while the
   * loop sleeps the first poke wakes it and later ones are absorbed until its pass starts;
   * during a pass, any number of pokes ask for exactly one more pass.
   */
  poke(): void {
    if (this.phase === "idle" && this.wake) {
      this.phase = "waking";
      this.wake();
    } else if (this.phase === "running") {
      this.wakePending = true;
    }
  }

  /** Stops after the current pass commits or rolls back; resolves when the loop has exited. */
  async stop(): Promise<void> {
    this.stopping = true;
    this.wake?.();
    const listener = this.listener;
    this.listener = undefined;
    await listener?.stop();
    await this.loop;
    this.loop = undefined;
    Drainer.active.delete(this);
    this.emit("stopped");
  }

  get running(): boolean {
    return this.loop !== undefined;
  }
}
