/**
 * The test files that run more than once: per sink (vitest.config.ts's `elasticsearch` and
 * `opensearch` projects), per engine major and per Postgres major (`pnpm test`'s `elasticsearch-9`,
 * `opensearch-3` and `postgres-14` projects, and every combination of scripts/test-matrix).
 */

/**
 * The tests of the downstream guarantees (outage, silent drops, versions, deletes, verify drift,
 * and the CLI's verify and drain): once against Elasticsearch, once against OpenSearch
 * (`createTestContext({ sink: "per-project" })` hands out the project's sink).
 */
export const perSinkScenarios = [
  "test/scenarios/outage-replay.test.ts",
  "test/scenarios/bulk-drop.test.ts",
  "test/scenarios/delete-race.test.ts",
  "test/engine/versioning.test.ts",
  "test/verify/verify-drift.test.ts",
  "test/verify/verify-cli.test.ts",
  "test/verify/verify-deep.test.ts",
  "test/verify/verify-bigint.test.ts",
  "test/verify/verify-hashed-ids.test.ts",
  "test/verify/verify-always-on.test.ts",
  "test/verify/verify-resume-sigkill.test.ts",
  "test/verify/verify-scheduled-queued.test.ts",
  "test/verify/verify-key-warnings.test.ts",
  "test/verify/bucket-summary-span.test.ts",
  "test/rebuild/rebuild.test.ts",
  "test/capture/re-insert-histories.test.ts",
  "test/engine/leapfrog-durability.test.ts",
  "test/engine/text-ids.test.ts",
  "test/engine/index-lifecycle.test.ts",
  "test/embeds/embeds-catalog.test.ts",
  "test/embeds/embed-shapes.test.ts",
  "test/embeds/fanout-sigkill.test.ts",
  "services/annotations-api/test/user-routes.test.ts",
  "services/catalog-api/test/sold-out-sequence.test.ts",
  "test/restore/postgres-restore.test.ts",
  "test/restore/index-restore.test.ts",
];

/** The history tester at its fixed seed (test/history/history.test.ts), per sink too. */
export const historyTest = "test/history/history.test.ts";

/** The sink conformance suite (and the client-compatibility checks) of each engine's package. */
export const conformanceTests = {
  elasticsearch: ["packages/elasticsearch/test/**/*.test.ts"],
  opensearch: ["packages/opensearch/test/**/*.test.ts"],
} as const;

/**
 * The short, Postgres-heavy set `pnpm test` runs against Postgres 14, the oldest supported
 * major: the capture triggers, re-insert histories, the claim and verify's SQL.
 */
export const postgres14Scenarios = [
  "test/capture/capture-trigger.test.ts",
  "test/capture/re-insert-histories.test.ts",
  "test/engine/claims.test.ts",
  "test/verify/verify-drift.test.ts",
];
