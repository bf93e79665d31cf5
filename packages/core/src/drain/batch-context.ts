import type { Transaction } from "kysely";
import type { BackoffOptions } from "./backoff.js";
import type { Collection } from "../collection.js";
import type { Logger } from "../logger.js";
import type { Sink } from "../sink.js";
import type { CompletionCount } from "../store/job-stat-store.js";
import type { WriteFirstPolicy } from "./write-first.js";

/** What one drain pass hands each collection's share of its batch (./collection-pass.ts). */
export interface BatchContext {
  trx: Transaction<any>;
  sink: Sink;
  collections: ReadonlyMap<string, Collection<any>>;
  /** SQL type of each collection's id column, to reject ids the column cannot compare against. */
  idTypes: ReadonlyMap<Collection<any>, string | undefined>;
  signal: AbortSignal;
  maxAttempts: number;
  backoff: BackoffOptions;
  sinkRetries: number;
  logger: Logger;
  /** Receives the per-lane completion counts recorded by the batch, to export after COMMIT. */
  completions?: CompletionCount[];
  /** Whether a pass writes before it reads (owned by the drainer: it learns across passes). Default: read first. */
  writeFirst?: WriteFirstPolicy;
  /** Record the confirmed jobs in the trace history (the console's entity trace). Default true. */
  entityEvents?: boolean;
  /**
   * Awaited each time a collection's rows are loaded, before its engine requests: the drainer
   * starts its next pass then, and lets this one on once it has its turn at the engine.
   */
  loaded?: () => Promise<void>;
  /** Told once a collection's bulk is answered, before its read-back: the pass's turn at the engine goes to the next pass. */
  written?: () => void;
}
