/**
 * `@tether/service-kit/lite` — the part of the kit a short-lived process needs, without loading
 * the OpenTelemetry SDKs and the HTTP server behind the main entry: the redacting logger and its
 * `maskUrl` / `scrubSecrets`, the env validators and the sink setting. The `tether` CLI starts
 * from here, so a verb does not pay for exporters it never starts.
 *
 * @example
 * import { maskUrl, sinkSetting } from "@tether/service-kit/lite";
 * const { kind, url } = sinkSetting(process.env);
 * console.error(`syncing to ${kind} at ${maskUrl(url)}`);
 */
export * from "./env-validators.js";
export * from "./logger.js";
export * from "./sink-setting.js";
