import { execFileSync } from "node:child_process";
import { mkdirSync } from "node:fs";
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
export const POLL = { timeout: 60_000, interval: 100 };

/** Builds the console page into packages/admin/web-dist (`pnpm --filter @tether/admin build:web`). */
export function buildConsolePage(): void {
  execFileSync(process.execPath, [join(repo, "packages", "admin", "scripts", "build-web.mjs")], { stdio: ["ignore", "ignore", "inherit"] });
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
