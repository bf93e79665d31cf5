import type { Meter } from "@opentelemetry/api";
import { DRIFT_KINDS, type Logger, type VerifyMode, type VerifyRunSummary } from "@tether/core/internal";

/** The collections and modes a daemon schedules, and since when (its start). */
export interface VerifySchedule {
  collections: readonly string[];
  modes: readonly VerifyMode[];
  startedAt: Date;
}

/**
 * The verify gauges, observed at scrape time from tether.verify_run (the same on every replica;
 * take max() across instances). Per collection and mode (fast, deep): the drift the last
 * completed run found by kind, when it completed, how long it took and how many entities it
 * compared; and the run in progress, done against total (0 and 0 when none runs). Per scheduled
 * collection and mode, since when it has been scheduled: its first run's start, or this
 * process's start while it has none; the overdue rule counts from it while no run has completed.
 */
export function observeVerifyRuns(meter: Meter, read: () => Promise<VerifyRunSummary[]>, logger: Logger, schedule?: () => VerifySchedule): void {
  const drift = meter.createObservableGauge("tether_verify_drift", { description: "Drifted entities the last completed verify run found, by collection, mode and kind" });
  const completed = meter.createObservableGauge("tether_verify_last_completed_timestamp_seconds", { description: "When the last verify run of the collection and mode completed (Unix time)", unit: "s" });
  const duration = meter.createObservableGauge("tether_verify_last_duration_seconds", { description: "Wall time of the last completed verify run, resumes included", unit: "s" });
  const compared = meter.createObservableGauge("tether_verify_last_documents_compared", { description: "Entities the last completed verify run compared" });
  const done = meter.createObservableGauge("tether_verify_run_documents_done", { description: "Entities the verify run in progress has compared so far (0 when none runs)" });
  const total = meter.createObservableGauge("tether_verify_run_documents_total", { description: "Rows of the collection when the verify run in progress started (0 when none runs)" });
  const since = meter.createObservableGauge("tether_verify_scheduled_since_timestamp_seconds", {
    description: "When the collection's first verify run of the mode started, or this daemon's start while it has none (Unix time): the overdue rule counts from it until a run completes",
    unit: "s",
  });
  // Collections and modes seen once keep being reported (0 in progress) rather than repeating a stale value.
  const seen = new Map<string, { collection: string; mode: string }>();
  meter.addBatchObservableCallback(
    async (result) => {
      let runs: VerifyRunSummary[];
      try {
        runs = await read();
      } catch (err) {
        logger.warn({ err: String(err) }, "could not read the verify runs for /metrics");
        return;
      }
      const byKey = new Map(runs.map((r) => [`${r.collection}\u0000${r.mode}`, r]));
      for (const r of runs) seen.set(`${r.collection}\u0000${r.mode}`, { collection: r.collection, mode: r.mode });
      for (const [key, attrs] of seen) {
        const r = byKey.get(key);
        result.observe(done, r?.running?.documentsCompared ?? 0, attrs);
        result.observe(total, r?.running?.documentsTotal ?? 0, attrs);
        const last = r?.lastDone;
        if (!last) continue;
        for (const kind of [...DRIFT_KINDS, ...(attrs.mode === "deep" ? ["content"] : [])]) result.observe(drift, last.drifted[kind] ?? 0, { ...attrs, kind });
        result.observe(completed, last.finishedAt.getTime() / 1000, attrs);
        result.observe(duration, last.durationSeconds, attrs);
        result.observe(compared, last.documentsCompared, attrs);
      }
      const s = schedule?.();
      for (const collection of s?.collections ?? []) {
        for (const mode of s!.modes) {
          const first = byKey.get(`${collection}\u0000${mode}`)?.firstStartedAt ?? s!.startedAt;
          result.observe(since, first.getTime() / 1000, { collection, mode });
        }
      }
    },
    [drift, completed, duration, compared, done, total, since],
  );
}
