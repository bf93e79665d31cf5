import { randomUUID } from "node:crypto";
import { hostname } from "node:os";
import type { Kysely } from "kysely";
import { ValidationError } from "../errors.js";
import { silentLogger, type Logger } from "../logger.js";
import { markHeartbeatStopped, upsertHeartbeat } from "../store/drainer-heartbeat-store.js";

export interface DrainerHeartbeatOptions {
  db: Kysely<any>;
  /** The drainer's version, shown by the console (e.g. its package version). */
  version: string;
  /** Heartbeat while idle. The console shows a drainer silent for 3 intervals as gone. Default 30000 ms. */
  intervalMs?: number;
  /** Default: this machine's host name. */
  host?: string;
  /** Default: this process's pid. */
  pid?: number;
  /** Default: a random UUID per instance. */
  id?: string;
  logger?: Logger;
}

/** What a pass reports (a drainer's DrainResult fits). */
export interface HeartbeatPass {
  error?: string | undefined;
}

/**
 * Tells the console this drainer is alive: one row in tether.drainer_heartbeat, upserted after
 * passes (coalesced: never more than one write in flight) and on a timer while idle. A write
 * that fails is logged and retried with the next beat; it never disturbs draining.
 *
 * @example
 * const hb = new DrainerHeartbeat({ db, version: "1.2.0" });
 * drainer.on("batch", (r) => hb.recordPass(r));
 * await hb.start(); // ... await hb.stop();
 */
export class DrainerHeartbeat {
  readonly id: string;
  private readonly o: Required<Omit<DrainerHeartbeatOptions, "logger">> & { logger: Logger };
  private passes = 0;
  private failed = 0;
  private lastPass: Record<string, unknown> | undefined;
  /** The newest write, queued or running. */
  private last: Promise<void> = Promise.resolve();
  /** A write queued behind the running one and not started yet. */
  private next: Promise<void> | undefined;
  private timer: ReturnType<typeof setInterval> | undefined;

  constructor(opts: DrainerHeartbeatOptions) {
    const intervalMs = opts.intervalMs ?? 30_000;
    if (!Number.isInteger(intervalMs) || intervalMs <= 0) throw new ValidationError("intervalMs", `must be a positive integer, got ${String(intervalMs)}`);
    if (typeof opts.version !== "string" || opts.version.length === 0) throw new ValidationError("version", "is required");
    this.id = opts.id ?? randomUUID();
    this.o = { db: opts.db, version: opts.version, intervalMs, host: opts.host ?? hostname(), pid: opts.pid ?? process.pid, id: this.id, logger: opts.logger ?? silentLogger };
  }

  /** Writes the first heartbeat and starts the idle timer. */
  async start(): Promise<void> {
    await this.beat();
    this.timer ??= setInterval(() => void this.beat(), this.o.intervalMs);
    this.timer.unref();
  }

  /** Counts a pass and reports it soon. */
  recordPass(r: HeartbeatPass): void {
    this.passes += 1;
    if (r.error) this.failed += 1;
    this.lastPass = { ...r };
    void this.beat();
  }

  /**
   * Writes what accumulated, one write at a time: a call while a write runs queues the next one
   * (shared by every call until it starts), so the returned promise settles only after a write
   * that includes everything recorded before the call.
   */
  beat(): Promise<void> {
    if (!this.next) {
      this.next = this.last.then(() => {
        this.next = undefined;
        return this.write();
      });
      this.last = this.next;
    }
    return this.next;
  }

  private async write(): Promise<void> {
    const passes = this.passes;
    const failed = this.failed;
    const lastPass = this.lastPass;
    this.passes = 0;
    this.failed = 0;
    this.lastPass = undefined;
    try {
      await upsertHeartbeat(this.o.db, { id: this.id, host: this.o.host, pid: this.o.pid, version: this.o.version, passes, failedPasses: failed, ...(lastPass ? { lastPass } : {}) });
    } catch (err) {
      // Put the counts back: the next beat reports them.
      this.passes += passes;
      this.failed += failed;
      this.lastPass ??= lastPass;
      this.o.logger.warn({ err: err instanceof Error ? err.message : String(err) }, "could not write the drainer heartbeat");
    }
  }

  /** Stops the timer and marks the row stopped (a clean shutdown, not a lost drainer). */
  async stop(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
    await this.last;
    await markHeartbeatStopped(this.o.db, this.id).catch((err: unknown) => {
      this.o.logger.warn({ err: err instanceof Error ? err.message : String(err) }, "could not mark the drainer heartbeat stopped");
    });
  }
}
