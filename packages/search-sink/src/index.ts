/** @tether/search-sink — what the Elasticsearch and OpenSearch sinks share: they speak the same document API. */
export * from "./bulk-body.js";
export * from "./bulk-item-results.js";
export * from "./document-meta.js";
export * from "./engine-sink.js";
export { ANSWER_FILTERS } from "./engine-answers.js";
export type { AdminRequest } from "./index-aliases.js";
export { describePermissionDenied, readRefusal, type RefusalContext } from "./permission-denied.js";
