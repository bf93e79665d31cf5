import { defineConfig } from "vitest/config";
import base from "./vitest.config.js";

// The 3-node Elasticsearch cluster scenarios (scripts/test-cluster): kept out of scripts/test
// because three nodes starting and restarting take minutes on a small machine. Replaces (not
// merges: mergeConfig would append to) the include list of the main configuration.
export default defineConfig({
  ...base,
  test: {
    ...base.test,
    include: ["test/cluster/**/*.scenario.ts"],
    maxWorkers: 1,
    testTimeout: 1_800_000,
    hookTimeout: 900_000,
  },
});
