import type { Logger, QueueSample, RestoreFindings, VerifyRunSummary } from "@tether/core/internal";
import { observeVerifyRuns, type VerifySchedule } from "./verify-metrics.js";
import { observeRestores } from "./restore-metrics.js";
import { createPrometheusMetrics } from "@tether/service-kit";

export interface MetricsRegistryOptions {
  /** Reads the newest queue sample (written by whichever replica leads maintenance). */
  readSample: () => Promise<QueueSample | undefined>;
  /** Reads the last completed and the running verify run of each collection and mode. */
  readVerifyRuns?: () => Promise<VerifyRunSummary[]>;
  /** What this process schedules (read at scrape time): tether_verify_scheduled_since_timestamp_seconds covers each collection and mode. */
  verifySchedule?: () => VerifySchedule;
  /** Reads the restore findings (restore_detected) of the configured collections. */
  readRestores?: { read: () => Promise<RestoreFindings>; collections: readonly string[] };
  logger: Logger;
  /** service.name of the exported target_info. Default "tether-drainer". */
  serviceName?: string;
}

export interface MetricsRegistry {
  /** The Prometheus text exposition of every instrument, gauges read from Postgres now. */
  scrape(): Promise<string>;
  shutdown(): Promise<void>;
}

/**
 * Registers the process-wide OpenTelemetry MeterProvider, so core's counters and histogram
 * (jobs completed, drain batch duration) are recorded, plus the job-table gauges, observed at
 * scrape time from the newest tether.queue_sample. Every replica reports the same sample; the
 * alert rules take max() across instances.
 */
export function createMetricsRegistry(opts: MetricsRegistryOptions): MetricsRegistry {
  const registry = createPrometheusMetrics({
    serviceName: opts.serviceName ?? "tether-drainer",
    onConflict: () => opts.logger.warn({}, "another MeterProvider is registered in this process; tether counters go there"),
  });
  const meter = registry.meter("tether");
  const queueLength = meter.createObservableGauge("tether_queue_length", {
    description: "Unexpired jobs in the job table (due or not), by name, tag and priority",
  });
  const expired = meter.createObservableGauge("tether_jobs_expired", { description: "Expired jobs awaiting an operator (swept or not)" });
  const parked = meter.createObservableGauge("tether_jobs_parked", { description: "Parked (dead-lettered) jobs awaiting an operator" });
  const oldestDue = meter.createObservableGauge("tether_oldest_due_job_age_seconds", {
    description: "Age of the oldest due live job (re-index and fan-out work aside)",
    unit: "s",
  });
  // Fan-out work (tags fanout:…) has its own age: a rename that reaches a million documents is
  // a backlog to see, not live lag to page on. Its length is tether_queue_length{tag=~"fanout:.*"}.
  const fanoutOldestDue = meter.createObservableGauge("tether_fanout_oldest_due_job_age_seconds", {
    description: "Age of the oldest due fan-out job (changes of embedded tables and the sync jobs they enqueued)",
    unit: "s",
  });
  const sampleAge = meter.createObservableGauge("tether_queue_sample_age_seconds", {
    description: "Age of the queue sample the gauges come from; grows when no replica runs maintenance",
    unit: "s",
  });
  // Lanes seen before are reported as 0 once empty: the SDK would otherwise repeat their last
  // observed value forever (cumulative async instruments keep unobserved attribute sets).
  const seenLanes = new Map<string, { name: string; tag: string; priority: number }>();
  meter.addBatchObservableCallback(
    async (result) => {
      let sample: QueueSample | undefined;
      try {
        sample = await opts.readSample();
      } catch (err) {
        opts.logger.warn({ err: String(err) }, "could not read the queue sample for /metrics");
        return;
      }
      if (!sample) return;
      const lengths = new Map<string, number>();
      for (const l of sample.lanes) {
        const key = JSON.stringify([l.name, l.tag, l.priority]);
        seenLanes.set(key, { name: l.name, tag: l.tag, priority: l.priority });
        lengths.set(key, l.length);
      }
      for (const [key, attrs] of seenLanes) result.observe(queueLength, lengths.get(key) ?? 0, attrs);
      result.observe(expired, sample.expired);
      result.observe(parked, sample.parked);
      result.observe(oldestDue, sample.oldestDueAgeSeconds);
      result.observe(fanoutOldestDue, sample.fanoutOldestDueAgeSeconds);
      result.observe(sampleAge, Math.max(0, (Date.now() - sample.at.getTime()) / 1000));
    },
    [queueLength, expired, parked, oldestDue, fanoutOldestDue, sampleAge],
  );

  if (opts.readVerifyRuns) observeVerifyRuns(meter, opts.readVerifyRuns, opts.logger, opts.verifySchedule);
  if (opts.readRestores) observeRestores(meter, opts.readRestores.read, opts.readRestores.collections, opts.logger);

  return {
    scrape: () => registry.scrape((e) => opts.logger.warn({ err: String(e) }, "metrics collection error")),
    shutdown: () => registry.shutdown(),
  };
}
