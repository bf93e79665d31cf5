import type { Kysely } from "kysely";
import type { BackoffOptions } from "./backoff.js";
import type { Collection } from "../collection.js";
import type { DrainCounts } from "./drain-batch.js";
import type { FanoutCounts } from "./fan-out-pass.js";
import type { Logger } from "../logger.js";
import type { OptionDefaults } from "../resolve-options.js";
import type { Sink } from "../sink.js";
import type { WakeListenerOptions } from "../wake/wake-listener.js";
import type { WriteFirstMode } from "./write-first.js";
import type { VersionFloorResult } from "../ops/version-floor.js";

export interface DrainerOptions {
  db: Kysely<any>;
  sink: Sink;
  collections: readonly Collection<any>[];
  logger?: Logger;
  /** Jobs claimed per pass. Default 2500. */
  batchSize?: number;
  /**
   * Deadline of one drain transaction. Downstream calls are aborted at this point and the
   * batch's outcome is committed; Postgres kills the session if the process itself stalls
   * (idle_in_transaction_session_timeout = deadline + 10 s). Default 30000 ms.
   */
  deadlineMs?: number;
  /** Permanent per-item failures tolerated before a job is parked. Default 5. */
  maxAttempts?: number;
  /** Backoff of failed jobs. Defaults: 1 s base, 5 min cap, jitter ×[0.5, 1.5). */
  backoff?: BackoffOptions;
  /** Request-level retries inside one downstream call (connection errors, 429/5xx). Default 2. */
  sinkRetries?: number;
  /** Expired jobs moved to the dead-letter table per statement of `sweep()`. Default 10000. */
  sweepLimit?: number;
  /**
   * Time a pass may spend sweeping expired jobs. The claim sweeps the expired jobs it meets
   * (they count towards the batch); while a claim met some and the batch is not full, the pass
   * claims again, for up to this long. Default 5000 ms.
   */
  sweepBudgetMs?: number;
  /**
   * Passes writing to the engine at a time while batches come back full, plus one pass ahead:
   * it claims and loads the next batch (Postgres) while the others write, and takes the first
   * turn given back (a pass gives its turn back once its bulk is answered, then reads back and
   * confirms). Each is a whole pass (its own transaction, claim, read-back and confirmation;
   * SKIP LOCKED keeps them apart) holding one pooled connection: give the pool this many plus
   * one (with fewer, the pass ahead waits for a connection). Default 1.
   */
  concurrency?: number;
  /** Interval of the loop between passes that came back short. Default 60000 ms. */
  intervalMs?: number;
  /** Jitter added to each interval, as a fraction. Default 0.1. */
  intervalJitter?: number;
  /**
   * LISTEN for wake-ups on a dedicated session while the loop runs: due-now work (admin
   * re-index, parked retry, verify repairs, a failed direct sync) starts a pass at once instead
   * of waiting for the interval, which keeps running regardless. Default: off. Not through a
   * transaction-mode pooler (PgBouncer): give a session-mode connection string.
   */
  listen?: WakeListenerOptions;
  /** Record each confirmed job's outcome in the trace history (the console's entity trace). Default true. */
  entityEvents?: boolean;
  /**
   * Write before reading: entities with a row are written at their version with external
   * versioning first, and only those the engine refuses as not newer are read and decided (one
   * engine request per document fewer in a re-index or a backlog). "auto" starts reading first
   * and switches per collection by what the passes find: to writing first after a pass whose
   * pre-read changed no write for most entities, back after a pass whose writes were mostly
   * refused. Default "auto".
   */
  writeFirst?: WriteFirstMode;
  /**
   * Documents a pass bumps and enqueues while it expands fan-out jobs (changes of embedded tables
   * that reach many documents), in one short transaction of its own before the sync batch.
   * Default 10000.
   */
  fanoutChunkSize?: number;
  /**
   * Check the version floor (`checkVersionFloor`) when the loop starts and before
   * `drainUntilEmpty`: raise `tether.version_seq` above the highest version each collection's
   * index holds, so a Postgres that went back in time (a restore, a point-in-time recovery, a
   * failover) hands out no version the engine holds. A failed check is logged and retried at the
   * next start; the maintenance leader checks each cycle too. Default true.
   */
  versionFloor?: boolean;
}

/** The defaults documented on `DrainerOptions`, and how each value is validated. */
export const DRAINER_DEFAULTS: OptionDefaults<Omit<DrainerOptions, "db" | "sink" | "collections" | "logger" | "backoff" | "listen">> = {
  batchSize: [2500, "positive integer"],
  deadlineMs: [30_000, "positive integer"],
  maxAttempts: [5, "positive integer"],
  sinkRetries: [2, "non-negative integer"],
  sweepLimit: [10_000, "positive integer"],
  sweepBudgetMs: [5_000, "positive integer"],
  concurrency: [1, "positive integer"],
  intervalMs: [60_000, "positive integer"],
  intervalJitter: [0.1, "fraction"],
  entityEvents: [true, "boolean"],
  writeFirst: ["auto", ["auto", "always", "never"]],
  fanoutChunkSize: [10_000, "positive integer"],
  versionFloor: [true, "boolean"],
};

/** Why the loop started a pass. */
export type PassReason = "start" | "interval" | "full" | "wake" | "fanout";

export interface DrainResult extends DrainCounts {
  durationMs: number;
  /** The pass's expansion of fan-out jobs, when the drainer has collections with fan-out embeds. */
  fanout?: FanoutCounts;
  /** Set when the pass failed as a whole (Postgres unreachable, deadline); its jobs stay due. */
  error?: string;
}

export interface DrainerEvents {
  /** Job ids locked by this pass (inside its transaction). */
  claimed: [string[]];
  /** The same ids, just before COMMIT/ROLLBACK releases them. */
  releasing: [string[]];
  batch: [DrainResult];
  error: [Error];
  stopped: [];
  /** The loop starts a pass, and why ("full": the one before it came back full; "fanout": fan-out work is left). */
  pass: [PassReason];
  /** A wake-up arrived: a NOTIFY (its payload) or LISTEN re-established after a lost session. */
  wake: [{ source: "notify" | "listening"; payload: string }];
  /** The wake-up session is listening (again). */
  listening: [];
  /** A version floor check finished (see `DrainerOptions.versionFloor`). */
  versionFloor: [VersionFloorResult[]];
}
