/**
 * @tether/elasticsearch — the Elasticsearch sink for @tether/core.
 *
 * @packageDocumentation
 * @module @tether/elasticsearch
 */
export * from "./classify-error.js";
export * from "./document-meta.js";
export * from "./elasticsearch-sink.js";
export * from "./elasticsearch-factory.js";
