import { fileURLToPath } from "node:url";
import { defineConfig } from "vitest/config";
import { conformanceTests, historyTest, perSinkScenarios, postgres14Scenarios } from "./test/suites.js";

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

// Which files run per sink, per engine major and per Postgres major: test/suites.ts.
const perSink = [...perSinkScenarios, historyTest];
const openSearchOnly = [...conformanceTests.opensearch];

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
      {
        extends: true,
        test: {
          name: "elasticsearch-9",
          globalSetup: ["packages/testkit/src/global-setup.ts"],
          include: [...conformanceTests.elasticsearch],
          provide: { tetherSink: "elasticsearch", tetherEngineVersion: "9" },
        },
      },
      {
        extends: true,
        test: {
          name: "opensearch-3",
          globalSetup: ["packages/testkit/src/global-setup.ts"],
          include: openSearchOnly,
          provide: { tetherSink: "opensearch", tetherEngineVersion: "3" },
        },
      },
      {
        extends: true,
        test: {
          name: "postgres-14",
          globalSetup: ["packages/testkit/src/global-setup.ts"],
          include: postgres14Scenarios,
          provide: { tetherSink: "elasticsearch", tetherPostgresVersion: "14" },
        },
      },
    ],
  },
});
