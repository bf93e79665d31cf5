import type { Resource } from "@opentelemetry/resources";
import type { MetricReader } from "@opentelemetry/sdk-metrics";

/**
 * What `startTelemetry` hands to the process's MeterProvider, which `createPrometheusMetrics`
 * creates later (the API creates it with its app, the drainer with its daemon).
 */
interface PendingTelemetry {
  resource?: Resource;
  /** The OTLP metric reader; a reader serves one provider, so the first provider takes it. */
  metricReader?: MetricReader;
  readerTaken: boolean;
}

export const telemetryState: PendingTelemetry = { readerTaken: false };

/** The OTLP reader for the first MeterProvider of the process, if any is configured and still free. */
export function takeMetricReader(): MetricReader | undefined {
  if (!telemetryState.metricReader || telemetryState.readerTaken) return undefined;
  telemetryState.readerTaken = true;
  return telemetryState.metricReader;
}
