/**
 * Which OTLP exports the standard OpenTelemetry environment variables ask for. Tether follows the
 * specification's names but never exports to a default endpoint nobody configured: a signal is
 * exported when its `OTEL_<SIGNAL>_EXPORTER` lists `otlp`, or when that variable is unset and an
 * OTLP endpoint (`OTEL_EXPORTER_OTLP_ENDPOINT` or the signal's own) is set.
 */
export type OtlpProtocol = "http/protobuf" | "http/json";

export interface OtlpSignal {
  enabled: boolean;
  protocol: OtlpProtocol;
}

export interface OtlpSettings {
  /** `OTEL_SDK_DISABLED=true`: nothing is exported. */
  disabled: boolean;
  traces: OtlpSignal;
  metrics: OtlpSignal & { intervalMs: number };
}

/** A variable holding a value Tether cannot act on; the message names it. */
export class OtlpSettingError extends Error {
  constructor(
    readonly variable: string,
    message: string,
  ) {
    super(`${variable} ${message}`);
    this.name = "OtlpSettingError";
  }
}

const PROTOCOLS: readonly string[] = ["http/protobuf", "http/json"];

function list(value: string | undefined): string[] | undefined {
  if (value === undefined || value.trim() === "") return undefined;
  return value.split(",").map((s) => s.trim().toLowerCase()).filter(Boolean);
}

function signal(env: NodeJS.ProcessEnv, name: "TRACES" | "METRICS", allowed: readonly string[]): OtlpSignal {
  const exporterVar = `OTEL_${name}_EXPORTER`;
  const exporters = list(env[exporterVar]);
  for (const e of exporters ?? []) {
    if (!allowed.includes(e)) throw new OtlpSettingError(exporterVar, `lists "${e}"; supported: ${allowed.join(", ")}`);
  }
  const endpoint = env[`OTEL_EXPORTER_OTLP_${name}_ENDPOINT`] || env.OTEL_EXPORTER_OTLP_ENDPOINT;
  const enabled = exporters ? exporters.includes("otlp") : Boolean(endpoint);
  const protocolVar = env[`OTEL_EXPORTER_OTLP_${name}_PROTOCOL`] ? `OTEL_EXPORTER_OTLP_${name}_PROTOCOL` : "OTEL_EXPORTER_OTLP_PROTOCOL";
  const protocol = env[protocolVar] || "http/protobuf";
  if (enabled && !PROTOCOLS.includes(protocol)) {
    throw new OtlpSettingError(protocolVar, `is "${protocol}"; supported: ${PROTOCOLS.join(", ")} (gRPC is not bundled)`);
  }
  return { enabled, protocol: protocol as OtlpProtocol };
}

/**
 * Reads the OTLP settings from the `OTEL_*` variables of an environment.
 *
 * @example
 * otlpSettings({ OTEL_EXPORTER_OTLP_ENDPOINT: "http://collector:4318" });
 * // { disabled: false, traces: { enabled: true, protocol: "http/protobuf" }, metrics: { enabled: true, ..., intervalMs: 60000 } }
 */
export function otlpSettings(env: NodeJS.ProcessEnv): OtlpSettings {
  const disabled = (env.OTEL_SDK_DISABLED ?? "").trim().toLowerCase() === "true";
  // "console" for traces predates OTLP here; "prometheus" for metrics is the /metrics endpoint, always served.
  const traces = signal(env, "TRACES", ["otlp", "console", "none"]);
  const metrics = signal(env, "METRICS", ["otlp", "prometheus", "none"]);
  const rawInterval = env.OTEL_METRIC_EXPORT_INTERVAL;
  const intervalMs = rawInterval ? Number(rawInterval) : 60_000;
  if (!Number.isInteger(intervalMs) || intervalMs <= 0) throw new OtlpSettingError("OTEL_METRIC_EXPORT_INTERVAL", "must be a positive integer (milliseconds)");
  return {
    disabled,
    traces: { ...traces, enabled: !disabled && traces.enabled },
    metrics: { ...metrics, enabled: !disabled && metrics.enabled, intervalMs },
  };
}

/**
 * The `OTEL_*` variables of an environment, for a service's env parsing to hand to
 * `startTelemetry` (packages never read `process.env` themselves).
 *
 * @example
 * const telemetry = startTelemetry({ serviceName: "orders-api", env: otelEnv(process.env) });
 */
export function otelEnv(source: NodeJS.ProcessEnv): NodeJS.ProcessEnv {
  return Object.fromEntries(Object.entries(source).filter(([k]) => k.startsWith("OTEL_")));
}
