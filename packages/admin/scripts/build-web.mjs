// Builds the console page into web-dist/ without a moment where a server starting meanwhile (a
// test, the quick start, another build's test) finds no page or a page without its assets:
// the build goes to a fresh folder; its hashed assets are moved in beside the old ones, then
// index.html is replaced in one rename. Two builds at once both succeed (same content).
// Assets no index.html has named for a day are pruned.
import { existsSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync, statSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { build } from "vite";

const pkg = join(dirname(fileURLToPath(import.meta.url)), "..");
const target = join(pkg, "web-dist");
const fresh = join(pkg, `web-dist.building-${process.pid}`);
const DAY_MS = 86_400_000;
try {
  await build({ configFile: join(pkg, "vite.config.ts"), logLevel: "warn", build: { outDir: fresh, emptyOutDir: true } });
  mkdirSync(join(target, "assets"), { recursive: true });
  for (const name of readdirSync(join(fresh, "assets"))) renameSync(join(fresh, "assets", name), join(target, "assets", name));
  renameSync(join(fresh, "index.html"), join(target, "index.html"));
  const html = readFileSync(join(target, "index.html"), "utf8");
  for (const name of readdirSync(join(target, "assets"))) {
    const file = join(target, "assets", name);
    if (!html.includes(name) && Date.now() - statSync(file).mtimeMs > DAY_MS) rmSync(file, { force: true });
  }
} finally {
  if (existsSync(fresh)) rmSync(fresh, { recursive: true, force: true });
}
