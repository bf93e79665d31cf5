import { readFileSync } from "node:fs";
import { OTLPMetricExporter as JsonMetricExporter } from "@opentelemetry/exporter-metrics-otlp-http";
import { OTLPMetricExporter as ProtoMetricExporter } from "@opentelemetry/exporter-metrics-otlp-proto";
import { OTLPTraceExporter as JsonTraceExporter } from "@opentelemetry/exporter-trace-otlp-http";
import { OTLPTraceExporter as ProtoTraceExporter } from "@opentelemetry/exporter-trace-otlp-proto";
import { detectResources, envDetector, resourceFromAttributes, type Resource } from "@opentelemetry/resources";
import { PeriodicExportingMetricReader } from "@opentelemetry/sdk-metrics";
import { BatchSpanProcessor, ConsoleSpanExporter, SimpleSpanProcessor, type SpanExporter, type SpanProcessor } from "@opentelemetry/sdk-trace-base";
import { OtlpSettingError, otlpSettings, type OtlpSettings } from "./otlp-settings.js";
import { envReporter } from "./start-up.js";
import { telemetryState } from "./telemetry-state.js";
import { startTracing, type Tracing } from "./tracing.js";

export interface TelemetryOptions {
  /** `service.name` unless `OTEL_SERVICE_NAME` (or `service.name` in `OTEL_RESOURCE_ATTRIBUTES`) says otherwise. */
  serviceName: string;
  /** `service.version`; e.g. the version of the process's package.json. */
  serviceVersion?: string;
  /** The environment holding the `OTEL_*` variables (a service passes `otelEnv(process.env)` from its env parsing). */
  env: NodeJS.ProcessEnv;
  /** An extra span exporter (tests use an in-memory one). */
  spanExporter?: SpanExporter;
}

export interface Telemetry {
  /** The resource every span and metric carries (service.name, service.version, OTEL_RESOURCE_ATTRIBUTES). */
  resource: Resource;
  /** Where spans go: "otlp", "console", both, or "none". */
  traces: string;
  /** "otlp" when metrics are pushed over OTLP; the Prometheus `/metrics` endpoint is served either way. */
  metrics: "otlp" | "none";
  settings: OtlpSettings;
  /** Exports what is pending (spans, a last metric collection), then stops. Call at shutdown. */
  shutdown(): Promise<void>;
}

/** The version field of the package.json at `url`, or undefined. */
export function packageVersion(url: URL): string | undefined {
  try {
    return (JSON.parse(readFileSync(url, "utf8")) as { version?: string }).version;
  } catch {
    return undefined;
  }
}

/**
 * Starts OpenTelemetry for a Tether process, configured by the standard `OTEL_*` variables:
 * traces and metrics are exported over OTLP/HTTP (`OTEL_EXPORTER_OTLP_ENDPOINT`, or the
 * per-signal `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT` / `..._METRICS_ENDPOINT`, with
 * `OTEL_EXPORTER_OTLP_PROTOCOL` `http/protobuf` (default) or `http/json`, `OTEL_EXPORTER_OTLP_HEADERS`,
 * `OTEL_METRIC_EXPORT_INTERVAL`); `OTEL_TRACES_EXPORTER` / `OTEL_METRICS_EXPORTER` choose
 * explicitly (`otlp`, `console` for traces, `none`); `OTEL_SDK_DISABLED=true` turns export off.
 * Nothing is sent when no endpoint is configured. Call it first, before the process creates
 * its metrics (`createPrometheusMetrics` attaches the OTLP reader to its provider).
 *
 * @example
 * const telemetry = startTelemetry({ serviceName: "orders-api", serviceVersion: "1.4.0", env: otelEnv(process.env) });
 * onShutdown(logger, "shutting down", () => telemetry.shutdown());
 */
export function startTelemetry(opts: TelemetryOptions): Telemetry {
  const env = opts.env;
  const settings = otlpSettings(env);
  const base = resourceFromAttributes({ "service.name": opts.serviceName, ...(opts.serviceVersion ? { "service.version": opts.serviceVersion } : {}) });
  // envDetector reads OTEL_SERVICE_NAME and OTEL_RESOURCE_ATTRIBUTES; they win over the defaults.
  const resource = settings.disabled ? base : base.merge(detectResources({ detectors: [envDetector] }));

  const processors: SpanProcessor[] = [];
  const traceTargets: string[] = [];
  if (settings.traces.enabled) {
    const exporter = settings.traces.protocol === "http/json" ? new JsonTraceExporter() : new ProtoTraceExporter();
    processors.push(new BatchSpanProcessor(exporter));
    traceTargets.push("otlp");
  }
  if (!settings.disabled && (env.OTEL_TRACES_EXPORTER ?? "").split(",").map((s) => s.trim()).includes("console")) {
    processors.push(new SimpleSpanProcessor(new ConsoleSpanExporter()));
    traceTargets.push("console");
  }
  if (opts.spanExporter) processors.push(new SimpleSpanProcessor(opts.spanExporter));
  const tracing: Tracing = startTracing("none", { resource, spanProcessors: processors });

  telemetryState.resource = resource;
  if (settings.metrics.enabled) {
    const exporter = settings.metrics.protocol === "http/json" ? new JsonMetricExporter() : new ProtoMetricExporter();
    telemetryState.metricReader = new PeriodicExportingMetricReader({ exporter, exportIntervalMillis: settings.metrics.intervalMs });
    telemetryState.readerTaken = false;
  }
  const reader = telemetryState.metricReader;

  return {
    resource,
    traces: traceTargets.length > 0 ? traceTargets.join(",") : "none",
    metrics: settings.metrics.enabled ? "otlp" : "none",
    settings,
    async shutdown() {
      // A last collection goes out with the reader's shutdown (only once a provider took it).
      await Promise.allSettled([tracing.shutdown(), reader && telemetryState.readerTaken ? reader.shutdown() : Promise.resolve()]);
      if (telemetryState.metricReader === reader) {
        telemetryState.metricReader = undefined;
        telemetryState.readerTaken = false;
      }
    },
  };
}

/**
 * `startTelemetry` for a process's entry point: an `OTEL_*` variable Tether cannot act on (an
 * unknown exporter, the gRPC protocol) is one JSON log line naming it and exit 78, like any
 * other invalid setting.
 *
 * @example
 * const telemetry = startTelemetryOrExit("orders-api", { serviceName: "orders-api", env: otelEnv(process.env) });
 */
export function startTelemetryOrExit(service: string, opts: TelemetryOptions, exit: (code: number) => never = process.exit): Telemetry {
  try {
    return startTelemetry(opts);
  } catch (err) {
    if (!(err instanceof OtlpSettingError)) throw err;
    envReporter(service, opts.env, { exit })({ errors: { [err.variable]: new Error(err.message.slice(err.variable.length + 1)) }, env: {} } as never);
    return exit(78);
  }
}
