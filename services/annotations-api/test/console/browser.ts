import { execFileSync } from "node:child_process";
import { existsSync, mkdirSync, readdirSync, statSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { chromium, type Browser } from "playwright-core";

const repo = fileURLToPath(new URL("../../../../", import.meta.url));

/** Where the page screenshots go (under the ignored .cache/, kept as test artifacts). */
export const SCREENSHOTS = join(repo, ".cache", "screenshots");

/**
 * How long a polled assertion (`expect.poll`) keeps trying: generous, because a loaded machine
 * may take seconds to re-render; a passing assertion returns at its first success.
 */
export const POLL = { timeout: 120_000, interval: 100 };

/**
 * Hang guards of the browser tests, not expectations: each step awaits its own signal (a log
 * line, a response, a locator), and on a machine loaded many times over a step may take minutes.
 */
export const BROWSER_HOOK_TIMEOUT_MS = 600_000;
export const BROWSER_TEST_TIMEOUT_MS = 300_000;

const newestMtime = (path: string): number =>
  statSync(path).isDirectory() ? Math.max(0, ...readdirSync(path).map((name) => newestMtime(join(path, name)))) : statSync(path).mtimeMs;

/**
 * Builds the console page into packages/admin/web-dist (`pnpm --filter @tether/admin build:web`)
 * unless the built page is newer than its sources (scripts/bootstrap built it): a build costs
 * seconds of CPU that a busy machine needs for the tests themselves.
 */
export function buildConsolePage(): void {
  const admin = join(repo, "packages", "admin");
  const built = join(admin, "web-dist", "index.html");
  const sources = Math.max(newestMtime(join(admin, "web")), newestMtime(join(admin, "src", "routes")), newestMtime(join(admin, "vite.config.ts")), newestMtime(join(admin, "scripts", "build-web.mjs")));
  if (existsSync(built) && statSync(built).mtimeMs > sources) return;
  execFileSync(process.execPath, [join(admin, "scripts", "build-web.mjs")], { stdio: ["ignore", "ignore", "inherit"] });
}

/**
 * Debian's Chromium (scripts/install-chromium installs the package when it is missing; Playwright
 * never downloads a browser), headless. Every launch gets a fresh temporary profile.
 */
export async function launchChromium(): Promise<Browser> {
  const executablePath = execFileSync("bash", [join(repo, "scripts", "install-chromium")], { encoding: "utf8" }).trim().split("\n").pop()!;
  mkdirSync(SCREENSHOTS, { recursive: true });
  return chromium.launch({
    executablePath,
    headless: true,
    args: ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run", "--disable-background-networking", "--disable-component-update", "--disable-sync"],
  });
}
