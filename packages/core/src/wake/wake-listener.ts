import { EventEmitter } from "node:events";
import pg from "pg";
import { WAKE_CHANNEL } from "../capture/capture-options.js";
import { ValidationError } from "../errors.js";
import { silentLogger, type Logger } from "../logger.js";
import { checkChannel, listenOn } from "./wake-store.js";

export interface WakeListenerOptions {
  /**
   * A session-mode connection to Postgres. LISTEN does not work through a transaction-mode
   * pooler (PgBouncer `pool_mode = transaction`): point this at Postgres itself or at a
   * session-mode pool, or run drainers without a listener (the interval still drains).
   */
  connectionString: string;
  /** Channel to LISTEN on. Default "tether_wake". */
  channel?: string;
  logger?: Logger;
  /** First delay before reconnecting after the session is lost. Default 100 ms. */
  reconnectMinMs?: number;
  /** Longest delay between reconnect attempts. Default 5000 ms. */
  reconnectMaxMs?: number;
  /** Shown in pg_stat_activity. Default "tether-listen". */
  applicationName?: string;
}

export interface WakeListenerEvents {
  /** LISTEN is active (first time, and again after every reconnect). */
  listening: [];
  /** A notification arrived; its payload (the job name, or ""). */
  notification: [string];
  /** The session was lost or could not be opened; a reconnect is scheduled. */
  lost: [Error];
}

/**
 * Holds one dedicated Postgres session LISTENing for wake-ups and re-establishes it, with
 * backoff, whenever it is lost. Never throws after `start()`: a listener that cannot connect
 * only means drainers fall back to their interval.
 *
 * @example
 * const listener = new WakeListener({ connectionString: env.DATABASE_URL });
 * listener.on("notification", () => drainer.poke());
 * await listener.start();
 */
export class WakeListener extends EventEmitter<WakeListenerEvents> {
  private readonly o: Required<Omit<WakeListenerOptions, "logger">> & { logger: Logger };
  private client: pg.Client | undefined;
  private timer: NodeJS.Timeout | undefined;
  private failures = 0;
  private stopped = true;
  private active = false;

  constructor(opts: WakeListenerOptions) {
    super();
    if (typeof opts.connectionString !== "string" || opts.connectionString.length === 0) throw new ValidationError("listen.connectionString", "is required");
    this.o = {
      connectionString: opts.connectionString,
      channel: opts.channel ?? WAKE_CHANNEL,
      logger: opts.logger ?? silentLogger,
      reconnectMinMs: opts.reconnectMinMs ?? 100,
      reconnectMaxMs: opts.reconnectMaxMs ?? 5_000,
      applicationName: opts.applicationName ?? "tether-listen",
    };
    checkChannel(this.o.channel);
  }

  /** True while LISTEN is active on a live session. */
  get listening(): boolean {
    return this.active;
  }

  /** Opens the session; resolves after the first attempt, successful or not (it keeps retrying). */
  async start(): Promise<void> {
    if (!this.stopped) return;
    this.stopped = false;
    await this.connect();
  }

  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
    this.active = false;
    const c = this.client;
    this.client = undefined;
    await c?.end().catch(() => undefined);
  }

  private async connect(): Promise<void> {
    const client = new pg.Client({ connectionString: this.o.connectionString, application_name: this.o.applicationName });
    let lost = false;
    const onLost = (err: Error) => {
      if (lost || this.client !== client) return;
      lost = true;
      this.active = false;
      this.client = undefined;
      client.end().catch(() => undefined);
      if (this.stopped) return;
      this.failures += 1;
      const delay = Math.min(this.o.reconnectMaxMs, this.o.reconnectMinMs * 2 ** (this.failures - 1));
      this.o.logger.warn({ err: err.message, retryInMs: delay }, "wake-up listener lost its session; drainers fall back to their interval until it is back");
      this.emit("lost", err);
      this.timer = setTimeout(() => void this.connect(), delay * (0.75 + Math.random() * 0.5));
    };
    this.client = client;
    client.on("error", onLost);
    client.on("end", () => onLost(new Error("listener session ended")));
    client.on("notification", (msg) => {
      if (msg.channel === this.o.channel) this.emit("notification", msg.payload ?? "");
    });
    try {
      await client.connect();
      await listenOn(client, this.o.channel);
    } catch (err) {
      onLost(err instanceof Error ? err : new Error(String(err)));
      return;
    }
    if (this.client !== client || this.stopped) return;
    this.failures = 0;
    this.active = true;
    this.emit("listening");
  }
}
