/**
 * @tether/drainer — the reconciler daemon (drain loop, maintenance, /healthz, /metrics, /alerts).
 *
 * @packageDocumentation
 * @module @tether/drainer
 */
export * from "./daemon.js";
export type { DaemonState } from "./daemon-state.js";
export { createLogger, maskUrl, scrubSecrets, REDACT_PATHS } from "@tether/service-kit";
export type { TracesExporter } from "@tether/service-kit";
