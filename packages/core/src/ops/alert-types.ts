/** The alerts' names, thresholds and report: shared by the queue alerts (./alerts.ts) and the verify alerts (./verify-alerts.ts). */

export type AlertName =
  | "completion_rate_low"
  | "queue_length_high"
  | "expired_jobs"
  | "parked_jobs"
  | "oldest_due_job_too_old"
  | "verify_drift_found"
  | "verify_overdue"
  | "restore_detected";

/**
 * Every alert and what it says, in the order the report lists them: `tether alerts --help`
 * names them from here. Typed by `AlertName`, the name every alert's evaluation reports, so an
 * alert cannot be added without its line.
 */
export const ALERT_SUMMARIES: Readonly<Record<AlertName, string>> = {
  completion_rate_low: "confirmed completions per minute below the low watermark while work waits (completionRateLowPerMinute over completionRateWindowMinutes)",
  queue_length_high: "the live queue above its high watermark for a window (queueLengthHigh, queueLengthWindowMinutes)",
  expired_jobs: "jobs expired before they were confirmed (expiredMax)",
  parked_jobs: "jobs parked with a permanent failure (parkedMax)",
  oldest_due_job_too_old: "the oldest due live job older than the bound: the index lags Postgres (oldestDueJobMaxAgeSeconds)",
  verify_drift_found: "the last completed verify run of a collection found drift (verifyDriftMax)",
  verify_overdue: "a collection's last completed fast verify is too old (verifyMaxAgeSeconds)",
  restore_detected: "Postgres or an index went back in time (a version floor check), or many documents ahead of their rows (restoreAheadMax over restoreAheadWindowMinutes)",
};

/** The alerts' names, in the report's order. */
export const ALERT_NAMES = Object.keys(ALERT_SUMMARIES) as AlertName[];

export interface AlertThresholds {
  /** Low watermark of confirmed completions per minute (parked and expired do not count). Default 1. */
  completionRateLowPerMinute?: number;
  /** Window the completion rate is averaged over. Default 10 minutes. */
  completionRateWindowMinutes?: number;
  /**
   * How an idle system is treated. true (default): the completion-rate alert fires only while
   * some job of an unpaused lane has been due since before the window began (or was enqueued
   * before it and keeps failing), i.e. a drainer should have confirmed it and did not. An idle
   * dev box stays quiet; a stopped drainer, or one whose every write fails (downstream down),
   * fires one window after work became due. A stopped *producer* is indistinguishable from no
   * traffic in this mode. false: the seed's rule, for deployments whose traffic never stops:
   * fire whenever the rate is below the watermark, which also catches a stopped producer.
   */
  completionRateRequiresBacklog?: boolean;
  /**
   * High watermark of the live queue: unexpired jobs of write-path traffic, i.e. of tags starting
   * neither with "reindex" (admin work) nor with "fanout:" (changes of embedded tables, whose
   * backlog a rename of a large category legitimately makes). Default 1000.
   */
  queueLengthHigh?: number;
  /**
   * How long the live queue must stay above the watermark. Shown either by the maintenance
   * samples (tether.queue_sample) or by more than `queueLengthHigh` live jobs that were already
   * queued when the window began and still are. 0 fires at once. Default 5 minutes.
   */
  queueLengthWindowMinutes?: number;
  /** Expired jobs tolerated; the alert fires above this. Default 0 (any expired job fires). */
  expiredMax?: number;
  /** Parked jobs tolerated; the alert fires above this. Default 0 (any parked job fires). */
  parkedMax?: number;
  /**
   * Maximum age of the oldest due live job, in seconds (how far Elasticsearch lags Postgres; a
   * job backing off after failures counts from its enqueue time, see QueueGauges).
   * Paused lanes count: a long pause is lag too. Re-index and fan-out work do not. Default 600.
   */
  oldestDueJobMaxAgeSeconds?: number;
  /**
   * Drifted entities tolerated in the last completed verify run of each collection and mode
   * (summed); the alert fires above this. Default 0 (any drift fires, until a later run finds none).
   */
  verifyDriftMax?: number;
  /**
   * Maximum age, in seconds, of each collection's last completed fast verify (counted from when
   * scheduled verify became available, migration 000013, for a collection never verified).
   * Default 10800 (3 h: three intervals of the drainer's default hourly schedule).
   */
  verifyMaxAgeSeconds?: number;
  /**
   * Documents drain passes may find ahead of their rows (newer than the row, or another body at
   * its version) within `restoreAheadWindowMinutes` before `restore_detected` fires; it fires
   * regardless while a version floor check that raised the sequence is not settled. Default 100.
   */
  restoreAheadMax?: number;
  /** Window of `restoreAheadMax`. Default 60 minutes. */
  restoreAheadWindowMinutes?: number;
}

export type ResolvedAlertThresholds = Required<AlertThresholds>;

export interface AlertStatus {
  name: AlertName;
  firing: boolean;
  /** The measured figure (per minute, jobs or seconds, as the threshold). */
  value: number;
  threshold: number;
  /** One sentence with the figures, for logs and pages. */
  message: string;
  /** What to look at first, in order. */
  check: string[];
}

export interface AlertsReport {
  /** True while any alert fires. */
  firing: boolean;
  /** The instant evaluated (database clock unless pinned). */
  at: Date;
  alerts: AlertStatus[];
}
