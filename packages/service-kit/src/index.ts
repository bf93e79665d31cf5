/** @tether/service-kit — what every Tether process shares: redacting logger, env validators, shutdown. */
export * from "./env-validators.js";
export * from "./graceful-shutdown.js";
export * from "./logger.js";
export * from "./tracing.js";
