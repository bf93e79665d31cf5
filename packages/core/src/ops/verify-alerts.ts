import type { Kysely } from "kysely";
import { verifyRunSummaries, verifyScheduleSince } from "../store/verify-schedule-store.js";
import type { AlertStatus, ResolvedAlertThresholds } from "./alert-types.js";

/**
 * The two verify alerts, from tether.verify_run: drift found by the last completed run of any
 * collection (and mode), and a collection whose last completed fast run is older than the
 * threshold. `collections`: the configured ones; default: those with any run. A collection that
 * has never completed a fast run is overdue once the threshold has passed since its first run
 * started (runs that all fail, or never end); with no run at all, since `scheduleStartedAt` (the
 * drainer daemon's start: its schedule starts one at once) or, without it, since migration 000013.
 * So it stays silent right after a deploy, and fires when the schedule never gets a run through.
 */
export async function verifyAlerts(
  db: Kysely<any>,
  t: ResolvedAlertThresholds,
  now: Date,
  collections?: readonly string[],
  scheduleStartedAt?: Date,
): Promise<AlertStatus[]> {
  const [summaries, since] = await Promise.all([verifyRunSummaries(db), verifyScheduleSince(db)]);
  const drifted = summaries.filter((s) => (s.lastDone?.driftedTotal ?? 0) > 0);
  const driftTotal = drifted.reduce((n, s) => n + s.lastDone!.driftedTotal, 0);
  const drift: AlertStatus = {
    name: "verify_drift_found",
    firing: driftTotal > t.verifyDriftMax,
    value: driftTotal,
    threshold: t.verifyDriftMax,
    message:
      `${driftTotal} drifted entit${driftTotal === 1 ? "y" : "ies"} in the last completed verify runs (threshold ${t.verifyDriftMax})` +
      (drifted.length > 0 ? `: ${drifted.map((s) => `${s.collection} (${s.mode}) ${JSON.stringify(s.lastDone!.drifted)}`).join(", ")}` : ""),
    check: [
      "Which entities and why: the run in the console (Verify) or `tether status`; the drift kinds say what differed (missing, stale, ghost, deleted_live, embedded, content).",
      "The repairs were enqueued (tag verify): is the verify lane draining (`tether status`)? The alert clears when the next run of that collection finds none.",
      "What wrote behind tether's back: a script or person editing the index, SQL with capture off, a restore of a snapshot, a lost fan-out (embedded).",
    ],
  };

  const names = collections ?? [...new Set(summaries.map((s) => s.collection))];
  const fast = new Map(summaries.filter((s) => s.mode === "fast").map((s) => [s.collection, s]));
  let oldest = 0;
  const late: string[] = [];
  for (const c of names) {
    const s = fast.get(c);
    const last = s?.lastDone?.finishedAt ?? s?.firstStartedAt ?? scheduleStartedAt ?? since;
    const age = last ? Math.max(0, (now.getTime() - last.getTime()) / 1000) : 0;
    oldest = Math.max(oldest, age);
    if (age > t.verifyMaxAgeSeconds) late.push(c);
  }
  const overdue: AlertStatus = {
    name: "verify_overdue",
    firing: late.length > 0,
    value: Math.round(oldest),
    threshold: t.verifyMaxAgeSeconds,
    message:
      `the oldest last completed fast verify is ${Math.round(oldest)} s old (max ${t.verifyMaxAgeSeconds} s; a collection never verified counts from its first run, or from when it was first scheduled)` +
      (late.length > 0 ? `; overdue: ${late.map((c) => (fast.get(c)?.lastDone ? c : `${c} (never completed)`)).join(", ")}` : ""),
    check: [
      "Is a drainer running (it leads maintenance and runs the schedule)? Its log for \"verify run\" lines; options.verify in tether.config.ts (an interval of 0 turns a mode off).",
      "Did the runs fail? `tether status` and the console list each collection's last runs with their error (an index whose documents predate the bucket key needs `tether rebuild <collection>`).",
      "Is a run in progress but slow? tether_verify_run_documents_done against tether_verify_run_documents_total; raise options.verify.documentsPerSecond if the engine has room.",
    ],
  };
  return [drift, overdue];
}
