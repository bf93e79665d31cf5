/** @tether/service-kit — what every Tether process shares: redacting logger, env validators, shutdown, start-up, tracing, Prometheus metrics, the HTTP error contract. */
export * from "./env-validators.js";
export * from "./graceful-shutdown.js";
export * from "./logger.js";
export * from "./tracing.js";
export * from "./telemetry.js";
export * from "./otlp-settings.js";
export * from "./prometheus-metrics.js";
export * from "./http/index.js";
export * from "./start-up.js";
export * from "./sink-setting.js";
