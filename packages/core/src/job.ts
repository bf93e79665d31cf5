/**
 * Terminology
 * - job: a row in tether.job saying "entity X of collection C may differ downstream".
 * - claim: taking due, unexpired jobs with FOR UPDATE SKIP LOCKED inside a drain transaction;
 *   the row locks are the lease, so a killed drainer's claims vanish with its connection.
 * - confirm: deleting a job after reading its entity back equal on both sides.
 * - park: moving a job that cannot succeed to tether.dead_job with its reason.
 * - expire: a job past expires_at; the sweep moves it to tether.dead_job (reason expired).
 * - lane: all jobs of one name; a lane can be paused.
 */
/**
 * A claimed job: what a drain pass needs of it (its enqueue time reaches the trace history from
 * the confirming DELETE itself, so the claim carries no timestamps).
 */
export interface JobRow {
  id: string;
  name: string;
  priority: number;
  tag: string;
  kwargs: unknown;
  attempts: number;
  /** Where the claim found the row (its ctid): the row lock keeps it there until the pass ends. */
  tid: string;
}

/**
 * Where a sync job enqueued by a change of an embedded table came from (its kwargs.via): the
 * changed row of which table (its link column and value), and the fan-out job that expanded it,
 * when one did. The console's entity trace shows it, for pending jobs and in the history.
 */
export interface EmbedVia {
  /** The embedded table whose row changed. */
  table: string;
  /** Its link column. */
  column: string;
  /** The changed row's link value, as text. */
  value: string;
  /** The id of the fan-out job that expanded the change; absent for a direct embed's bump. */
  fanout?: string;
}

/** The kwargs of a sync job. */
export interface SyncJobArgs {
  id: string;
  /** Set when a change of an embedded table enqueued it. */
  via?: EmbedVia;
  /** Rewrite even when the downstream looks current (still verified before deleting). */
  force?: boolean;
  /** For hard deletes: the version the delete must carry downstream. */
  version?: number;
}

/** The kwargs of a fan-out job (`fanout_<collection>`): a change of an embedded row, and how far its expansion got. */
export interface FanoutJobArgs {
  /** The embed's name in its collection. */
  embed: string;
  /** The changed row's link value, as text. */
  link: string;
  /** The change's version in tether.embed_change. */
  version: number;
  /** The last document id expanded so far (expansion goes in id order). */
  after?: string;
  /** Documents expanded so far. */
  done?: number;
  /** Documents the change reaches, counted when the first chunk came back full. */
  total?: number;
}

export interface NewJob {
  name: string;
  entityId: string;
  priority: number;
  tag: string;
  /** Delay before the job is due. */
  delayMs: number;
  force?: boolean;
  version?: number;
}

/** Outcome of a job that left the live table ("expanded": a fan-out job whose documents all got their sync jobs). */
export type CompletionOutcome = "up_to_date" | "repaired" | "deleted_downstream" | "forced" | "expanded" | "parked" | "expired";

/** Tags starting with this prefix are work a change of an embedded table enqueued (fan-out jobs and what they expand into). */
export const FANOUT_TAG_PREFIX = "fanout:";

/** Tags starting with this prefix are admin re-index work: they never page. */
export const REINDEX_TAG_PREFIX = "reindex";

export const DEFAULT_LIVE_TAG = "live";
