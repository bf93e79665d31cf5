import { metrics, type Counter, type Histogram } from "@opentelemetry/api";

/**
 * Instruments tether records through @opentelemetry/api. They are no-ops until the process
 * registers a MeterProvider (the drainer and API services register a Prometheus exporter).
 * Gauges derived from Postgres (queue length, expired, parked, oldest due age) are observed by
 * the services, which own the polling. Names carry their unit the Prometheus way (a duration
 * ends in `_seconds`; the exporter adds `_total` to counters), and each instrument declares its
 * OpenTelemetry `unit`, so the OTLP export names the unit too.
 */
export interface TetherInstruments {
  jobsEnqueued: Counter;
  jobsCompleted: Counter;
  drainBatchDuration: Histogram;
  directSync: Counter;
  directSyncBreaker: Counter;
}

let cached: TetherInstruments | undefined;

export function instruments(): TetherInstruments {
  if (cached) return cached;
  const meter = metrics.getMeter("tether");
  cached = {
    jobsEnqueued: meter.createCounter("tether_jobs_enqueued", { description: "Jobs enqueued, by name, tag and priority", unit: "{job}" }),
    jobsCompleted: meter.createCounter("tether_jobs_completed", {
      description: "Jobs that left the queue, by name, tag, priority and outcome",
      unit: "{job}",
    }),
    drainBatchDuration: meter.createHistogram("tether_drain_batch_duration_seconds", {
      description: "Wall time of one drain batch",
      unit: "s",
      advice: { explicitBucketBoundaries: [0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60] },
    }),
    directSync: meter.createCounter("tether_direct_sync", { description: "Direct syncs after commit, by outcome", unit: "{sync}" }),
    directSyncBreaker: meter.createCounter("tether_direct_sync_breaker_transitions", {
      description: "State changes of the direct sync's circuit breaker, by the state entered (open, half_open, closed)",
      unit: "{transition}",
    }),
  };
  return cached;
}

/** Drops cached instruments (after a test swaps the global MeterProvider). */
export function resetInstruments(): void {
  cached = undefined;
}
