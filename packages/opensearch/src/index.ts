/** @tether/opensearch — the OpenSearch sink for @tether/core. */
export * from "./opensearch-sink.js";
export * from "./opensearch-factory.js";
