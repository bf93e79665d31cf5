/**
 * @tether/elasticsearch — the Elasticsearch sink for @tether/core.
 *
 * @packageDocumentation
 * @module @tether/elasticsearch
 */
export * from "./classify-error.js";
// The document metadata and per-item classification are the same for every engine of this API.
export { documentMeta, isPermanentItemStatus, META_FIELD, META_MAPPING, type DocumentMeta } from "@tether/search-sink";
export * from "./elasticsearch-sink.js";
export * from "./elasticsearch-factory.js";
