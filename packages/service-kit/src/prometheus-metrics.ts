import { metrics, type Meter } from "@opentelemetry/api";
import { PrometheusExporter, PrometheusSerializer } from "@opentelemetry/exporter-prometheus";
import { resourceFromAttributes } from "@opentelemetry/resources";
import { MeterProvider, type ViewOptions } from "@opentelemetry/sdk-metrics";
import { resetInstruments } from "@tether/core/internal";
import { takeMetricReader, telemetryState } from "./telemetry-state.js";

export interface PrometheusMetricsOptions {
  /** service.name of the exported target_info. */
  serviceName: string;
  /** Renames and re-buckets instruments (e.g. a unit suffix Prometheus convention wants). */
  views?: ViewOptions[];
  /** Told when another MeterProvider was registered first: tether's own instruments report there. */
  onConflict?: () => void;
}

export interface PrometheusMetrics {
  meter(name: string): Meter;
  /** The Prometheus text exposition of everything recorded in this process; collection errors go to `onError`. */
  scrape(onError?: (err: unknown) => void): Promise<string>;
  /** Stops the provider and, when it was the registered one, unregisters it. */
  shutdown(): Promise<void>;
}

/**
 * The process-wide OpenTelemetry MeterProvider both services use: registered globally so core's
 * instruments (jobs enqueued and completed, direct syncs, drain batch duration) land in it, and
 * read by a Prometheus exporter that never opens its own port (the service's `GET /metrics`
 * serves `scrape()`).
 *
 * @example
 * const m = createPrometheusMetrics({ serviceName: "tether-drainer" });
 * app.get("/metrics", async () => m.scrape());
 */
export function createPrometheusMetrics(opts: PrometheusMetricsOptions): PrometheusMetrics {
  const exporter = new PrometheusExporter({ preventServerStart: true });
  // With startTelemetry first, the provider carries its resource and pushes over OTLP too.
  const otlp = takeMetricReader();
  const provider = new MeterProvider({
    resource: telemetryState.resource ?? resourceFromAttributes({ "service.name": opts.serviceName }),
    readers: otlp ? [exporter, otlp] : [exporter],
    ...(opts.views ? { views: opts.views } : {}),
  });
  const registered = metrics.setGlobalMeterProvider(provider);
  if (!registered) opts.onConflict?.();
  // Core caches its instruments; drop any created against the previous (no-op) provider.
  resetInstruments();
  const serializer = new PrometheusSerializer();
  return {
    meter: (name) => provider.getMeter(name),
    async scrape(onError) {
      const { resourceMetrics, errors } = await exporter.collect();
      for (const e of errors) onError?.(e);
      return serializer.serialize(resourceMetrics);
    },
    async shutdown() {
      await provider.shutdown();
      if (registered) {
        metrics.disable();
        resetInstruments();
      }
    },
  };
}
