// Builds the console page into web-dist/ and swaps it in whole: the build goes to a fresh
// folder first, so a server starting meanwhile (a test, the quick start) never reads a
// half-written or emptied web-dist/.
import { existsSync, renameSync, rmSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { build } from "vite";

const pkg = join(dirname(fileURLToPath(import.meta.url)), "..");
const target = join(pkg, "web-dist");
const fresh = join(pkg, `web-dist.building-${process.pid}`);
const old = join(pkg, `web-dist.old-${process.pid}`);
try {
  await build({ configFile: join(pkg, "vite.config.ts"), logLevel: "warn", build: { outDir: fresh, emptyOutDir: true } });
  if (existsSync(target)) renameSync(target, old);
  renameSync(fresh, target);
} finally {
  rmSync(fresh, { recursive: true, force: true });
  rmSync(old, { recursive: true, force: true });
}
