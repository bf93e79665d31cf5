import type { Kysely } from "kysely";
import { resolveOptions, type OptionDefaults } from "../resolve-options.js";
import { livePersistentJobs, staleDueJobs } from "../store/job-store.js";
import { confirmedCompletions } from "../store/job-stat-store.js";
import { liveQueueAboveSince } from "../store/queue-sample-store.js";
import { databaseNow } from "../store/session-store.js";
import { readQueueGauges } from "./queue-read-model.js";
import type { AlertStatus, AlertThresholds, AlertsReport, ResolvedAlertThresholds } from "./alert-types.js";
import { verifyAlerts } from "./verify-alerts.js";
import { restoreAlert } from "./restore-alert.js";

export type { AlertName, AlertStatus, AlertThresholds, AlertsReport, ResolvedAlertThresholds } from "./alert-types.js";

/**
 * Tether's own evaluation of the queue, verify and restore alerts, from Postgres alone (tether.job,
 * dead_job, job_stat, queue_sample, verify_run, version_floor, ahead_stat): what `tether alerts`, the drainer's /alerts and the API's
 * /admin/alerts report, with or without Prometheus. Defaults match infra/prometheus/tether-rules.yml.
 */

/** The defaults documented on `AlertThresholds` (the same as infra/prometheus/tether-rules.yml), and how each value is validated. */
export const ALERT_DEFAULTS: OptionDefaults<AlertThresholds> = {
  completionRateLowPerMinute: [1, "non-negative number"],
  completionRateWindowMinutes: [10, "positive number"],
  completionRateRequiresBacklog: [true, "boolean"],
  queueLengthHigh: [1000, "non-negative number"],
  queueLengthWindowMinutes: [5, "non-negative number"],
  expiredMax: [0, "non-negative number"],
  parkedMax: [0, "non-negative number"],
  oldestDueJobMaxAgeSeconds: [600, "non-negative number"],
  verifyDriftMax: [0, "non-negative number"],
  verifyMaxAgeSeconds: [10_800, "positive number"],
  restoreAheadMax: [100, "non-negative number"],
  restoreAheadWindowMinutes: [60, "positive number"],
};

/** Fills defaults and validates once. */
export function resolveAlertThresholds(t: AlertThresholds = {}): ResolvedAlertThresholds {
  return resolveOptions(ALERT_DEFAULTS, t);
}

const minutesBefore = (d: Date, minutes: number) => new Date(d.getTime() - minutes * 60_000);
const round = (n: number, digits = 2) => Math.round(n * 10 ** digits) / 10 ** digits;

/**
 * Evaluates every alert against Postgres. Pass `now` to pin the clock (tests); otherwise the
 * database clock is used, the one job timestamps come from.
 *
 * @example
 * const report = await evaluateAlerts(db, { queueLengthHigh: 5000 });
 * if (report.firing) for (const a of report.alerts.filter((x) => x.firing)) console.error(a.message);
 */
export async function evaluateAlerts(
  db: Kysely<any>,
  thresholds: AlertThresholds = {},
  opts: {
    now?: Date;
    /** The configured collections: verify_overdue covers each, those never verified included. */
    collections?: readonly string[];
    /** When the caller's verify schedule started (the drainer daemon's start): a collection with no run at all is overdue from then. */
    scheduleStartedAt?: Date;
  } = {},
): Promise<AlertsReport> {
  const t = resolveAlertThresholds(thresholds);
  const now = opts.now ?? (await databaseNow(db));
  const pinned = { now };
  const rateStart = minutesBefore(now, t.completionRateWindowMinutes);
  const queueStart = minutesBefore(now, t.queueLengthWindowMinutes);
  const [gauges, completions, backlog, persistent, aboveSince] = await Promise.all([
    readQueueGauges(db, pinned),
    confirmedCompletions(db, rateStart, pinned),
    staleDueJobs(db, rateStart, pinned),
    livePersistentJobs(db, queueStart, pinned),
    liveQueueAboveSince(db, t.queueLengthHigh, pinned),
  ]);

  const rate = completions / t.completionRateWindowMinutes;
  const rateLow = rate < t.completionRateLowPerMinute;
  const completion: AlertStatus = {
    name: "completion_rate_low",
    firing: rateLow && (!t.completionRateRequiresBacklog || backlog > 0),
    value: round(rate),
    threshold: t.completionRateLowPerMinute,
    message:
      `${round(rate)} confirmed completions/min over the last ${t.completionRateWindowMinutes} min (low watermark ${t.completionRateLowPerMinute}/min); ` +
      `${backlog} job(s) of unpaused lanes have been waiting since before the window` +
      (t.completionRateRequiresBacklog && backlog === 0 && rateLow ? " (idle: nothing waiting, so not firing)" : ""),
    check: [
      "Is a drainer running and passing? GET /healthz on each replica (lastPass, error) and its logs for \"drain pass failed\".",
      "Can the drainer reach Postgres and Elasticsearch? Elasticsearch cluster health, connection errors in the drainer log.",
      "Is the producer enqueueing? tether_jobs_enqueued_total and `tether status` (which also lists paused lanes).",
    ],
  };

  const aboveForMs = aboveSince ? now.getTime() - aboveSince.getTime() : 0;
  const windowMs = t.queueLengthWindowMinutes * 60_000;
  const sustained = persistent > t.queueLengthHigh || aboveForMs >= windowMs;
  const queue: AlertStatus = {
    name: "queue_length_high",
    firing: gauges.liveLength > t.queueLengthHigh && sustained,
    value: gauges.liveLength,
    threshold: t.queueLengthHigh,
    message:
      `${gauges.liveLength} live jobs queued (high watermark ${t.queueLengthHigh}, window ${t.queueLengthWindowMinutes} min; re-index and fan-out work apart: ${gauges.fanoutLength} fan-out job(s)); ` +
      `above since ${aboveSince ? aboveSince.toISOString() : "-"} by samples, ${persistent} queued since before the window`,
    check: [
      "Which lane grows? `tether status` / tether_queue_length by name and tag; is that lane paused?",
      "Are drainers keeping up? tether_drain_batch_duration_seconds, full batches back to back, retried counts in /healthz lastPass.",
      "Is Elasticsearch slow or rejecting (429, 5xx)? its thread pools and the drainer's last_error on waiting jobs.",
    ],
  };

  const expired: AlertStatus = {
    name: "expired_jobs",
    firing: gauges.expired > t.expiredMax,
    value: gauges.expired,
    threshold: t.expiredMax,
    message: `${gauges.expired} expired job(s) (threshold ${t.expiredMax}): they passed expires_at without being confirmed`,
    check: [
      "Which jobs and why: `tether parked list` (reason expired) and their last_error.",
      "Was a lane paused or a drainer down for longer than the job lifetime (30 days)?",
      "Did the entity fail every attempt (mapping error, document too large)? Fix the cause, then `tether parked retry`.",
    ],
  };

  const parked: AlertStatus = {
    name: "parked_jobs",
    firing: gauges.parked > t.parkedMax,
    value: gauges.parked,
    threshold: t.parkedMax,
    message: `${gauges.parked} parked job(s) (threshold ${t.parkedMax}): the drainer gave up on them`,
    check: [
      "The reasons: `tether parked list` (last_error: mapping error, document too large, unknown job name, malformed kwargs).",
      "Recent deploys: a changed document builder or index mapping, or a job name no drainer handles.",
      "After fixing the cause: `tether parked retry`, then watch the lane drain.",
    ],
  };

  const oldest: AlertStatus = {
    name: "oldest_due_job_too_old",
    firing: gauges.oldestDueAgeSeconds > t.oldestDueJobMaxAgeSeconds,
    value: round(gauges.oldestDueAgeSeconds, 1),
    threshold: t.oldestDueJobMaxAgeSeconds,
    message: `the oldest due live job has waited ${round(gauges.oldestDueAgeSeconds, 1)} s (max ${t.oldestDueJobMaxAgeSeconds} s): Elasticsearch lags Postgres`,
    check: [
      "Is its lane paused (`tether status` lists paused lanes; `tether resume <lane>`)?",
      "Is it retrying? lastPass.retried in the drainer's /healthz, the job's attempts and last_error in tether.job; Elasticsearch errors in the drainer log.",
      "Are drainers running and keeping up (see completion_rate_low and queue_length_high)?",
    ],
  };

  const alerts = [completion, queue, expired, parked, oldest, ...(await verifyAlerts(db, t, now, opts.collections, opts.scheduleStartedAt)), await restoreAlert(db, t, now)];
  return { firing: alerts.some((a) => a.firing), at: now, alerts };
}
