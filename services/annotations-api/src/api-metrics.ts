import type { Counter, Histogram } from "@opentelemetry/api";
import type { BreakerSnapshot } from "@tether/core";
import { createPrometheusMetrics } from "@tether/service-kit";

export interface ApiMetrics {
  requests: Counter;
  requestDuration: Histogram;
  /** Reports the direct sync breaker's state as `tether_direct_sync_breaker_state` (0 closed, 1 half-open, 2 open). */
  observeBreaker(get: () => BreakerSnapshot | undefined): void;
  /** The Prometheus text exposition of everything recorded in this process. */
  scrape(): Promise<string>;
}

let shared: ApiMetrics | undefined;

/**
 * One MeterProvider per process, registered globally so tether's own instruments
 * (tether_jobs_enqueued, tether_direct_sync, …) land in it, read by a Prometheus exporter that
 * never opens its own port: GET /metrics serves it.
 */
export function apiMetrics(): ApiMetrics {
  if (shared) return shared;
  // Another component of this process may have registered first; then tether's instruments
  // report there and this endpoint only carries the API's own.
  const registry = createPrometheusMetrics({ serviceName: "tether-api" });
  const meter = registry.meter("tether-api");
  shared = {
    requests: meter.createCounter("tether_api_requests", { description: "HTTP requests answered, by method, route and status", unit: "{request}" }),
    requestDuration: meter.createHistogram("tether_api_request_duration_seconds", {
      description: "HTTP request duration",
      unit: "s",
      advice: { explicitBucketBoundaries: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10] },
    }),
    observeBreaker(get) {
      breakerSource = get;
    },
    scrape: () => registry.scrape(),
  };
  let breakerSource: (() => BreakerSnapshot | undefined) | undefined;
  const STATES = { closed: 0, half_open: 1, open: 2 } as const;
  meter
    .createObservableGauge("tether_direct_sync_breaker_state", { description: "The direct sync's circuit breaker: 0 closed, 1 half-open, 2 open" })
    .addCallback((r) => {
      const b = breakerSource?.();
      if (b) r.observe(STATES[b.state]);
    });
  return shared;
}
