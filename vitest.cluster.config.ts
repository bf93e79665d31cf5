import { defineConfig } from "vitest/config";
import base from "./vitest.config.js";

// The 3-node Elasticsearch cluster scenarios (scripts/test-cluster): kept out of scripts/test
// because three nodes starting and restarting take minutes on a small machine. Replaces (not
// merges: mergeConfig would append to) the include list of the main configuration.
// The main configuration's projects (one per sink) would each bring their own include list:
// the scenarios run once, against the Elasticsearch cluster they start.
const { projects: _projects, ...shared } = base.test ?? {};

export default defineConfig({
  ...base,
  test: {
    ...shared,
    globalSetup: ["packages/testkit/src/global-setup.ts"],
    provide: { tetherSink: "elasticsearch" },
    include: ["test/cluster/**/*.scenario.ts"],
    maxWorkers: 1,
    testTimeout: 1_800_000,
    hookTimeout: 900_000,
  },
});
