/** @tether/service-kit — what every Tether process shares: redacting logger, env validators, shutdown, tracing, Prometheus metrics. */
export * from "./env-validators.js";
export * from "./graceful-shutdown.js";
export * from "./logger.js";
export * from "./tracing.js";
export * from "./prometheus-metrics.js";
