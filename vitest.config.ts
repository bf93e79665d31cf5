import { fileURLToPath } from "node:url";
import { defineConfig } from "vitest/config";

const src = (p: string) => fileURLToPath(new URL(p, import.meta.url));

// Tests run the TypeScript sources of workspace packages directly: no build step before `pnpm test`.
const alias = {
  // The subpath first: an alias matches by prefix.
  "@tether/core/internal": src("./packages/core/src/internal.ts"),
  "@tether/core": src("./packages/core/src/index.ts"),
  "@tether/elasticsearch": src("./packages/elasticsearch/src/index.ts"),
  "@tether/testkit": src("./packages/testkit/src/index.ts"),
  "@tether/annotations": src("./packages/annotations/src/index.ts"),
  "@tether/service-kit": src("./packages/service-kit/src/index.ts"),
};

export default defineConfig({
  root: src("."),
  resolve: { alias },
  test: {
    include: ["packages/*/test/**/*.test.ts", "services/*/test/**/*.test.ts", "test/**/*.test.ts"],
    globalSetup: ["packages/testkit/src/global-setup.ts"],
    setupFiles: ["packages/testkit/src/no-leaked-drainers.ts"],
    pool: "forks",
    maxWorkers: 3,
    testTimeout: 120_000,
    hookTimeout: 180_000,
    teardownTimeout: 60_000,
  },
});
