import { fileURLToPath } from "node:url";
import { defineConfig } from "vitest/config";

const src = (p: string) => fileURLToPath(new URL(p, import.meta.url));

// Tests run the TypeScript sources of workspace packages directly: no build step before `pnpm test`.
const alias = {
  // The subpath first: an alias matches by prefix.
  "@tether/core/internal": src("./packages/core/src/internal.ts"),
  "@tether/core": src("./packages/core/src/index.ts"),
  "@tether/elasticsearch": src("./packages/elasticsearch/src/index.ts"),
  "@tether/opensearch": src("./packages/opensearch/src/index.ts"),
  "@tether/search-sink": src("./packages/search-sink/src/index.ts"),
  "@tether/testkit": src("./packages/testkit/src/index.ts"),
  "@tether/annotations": src("./packages/annotations/src/index.ts"),
  "@tether/service-kit": src("./packages/service-kit/src/index.ts"),
  "@tether/admin": src("./packages/admin/src/index.ts"),
};

/**
 * The tests of the downstream guarantees (outage, silent drops, versions, deletes, verify
 * drift, and the CLI's verify and drain) run once per sink: in the default project against Elasticsearch, and again in the
 * `opensearch` project, whose global setup provisions OpenSearch and whose test contexts
 * (`createTestContext({ sink: "per-project" })`) hand out the OpenSearch sink.
 */
const perSink = [
  "test/scenarios/outage-replay.test.ts",
  "test/scenarios/bulk-drop.test.ts",
  "test/scenarios/delete-race.test.ts",
  "test/engine/versioning.test.ts",
  "test/verify/verify-drift.test.ts",
  "test/verify/verify-cli.test.ts",
  "test/verify/verify-deep.test.ts",
  "test/verify/verify-bigint.test.ts",
  "test/rebuild/rebuild.test.ts",
  "test/capture/re-insert-histories.test.ts",
  "test/engine/leapfrog-durability.test.ts",
  "test/engine/text-ids.test.ts",
  "test/engine/index-lifecycle.test.ts",
  "test/history/history.test.ts",
];
const openSearchOnly = ["packages/opensearch/test/**/*.test.ts"];

export default defineConfig({
  root: src("."),
  resolve: { alias },
  test: {
    setupFiles: ["packages/testkit/src/no-leaked-drainers.ts"],
    pool: "forks",
    maxWorkers: 3,
    testTimeout: 120_000,
    hookTimeout: 180_000,
    teardownTimeout: 60_000,
    projects: [
      {
        extends: true,
        test: {
          name: "elasticsearch",
          globalSetup: ["packages/testkit/src/global-setup.ts"],
          include: ["packages/*/test/**/*.test.ts", "services/*/test/**/*.test.ts", "test/**/*.test.ts"],
          exclude: ["**/node_modules/**", ...openSearchOnly],
          provide: { tetherSink: "elasticsearch" },
        },
      },
      {
        extends: true,
        test: {
          name: "opensearch",
          globalSetup: ["packages/testkit/src/global-setup.ts"],
          include: [...perSink, ...openSearchOnly],
          provide: { tetherSink: "opensearch" },
        },
      },
    ],
  },
});
