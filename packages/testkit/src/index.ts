/** @tether/testkit — real Postgres and Elasticsearch for tests, per-file isolation, fixtures. */
export * from "./test-context.js";
export * from "./raw-engine.js";
export * from "./sink-conformance.js";
export * from "./run-naming.js";
export * from "./services/elasticsearch-service.js";
export * from "./services/opensearch-service.js";
export * from "./services/postgres-service.js";
export * from "./services/services-state.js";
export * from "./fault-proxy.js";
export * from "./pg-proxy.js";
export * from "./annotation-audit.js";
export * from "./scenario-load.js";
export * from "./scratch-database.js";
export * from "./wait-for.js";
export * from "./live-writers.js";
