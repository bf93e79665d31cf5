import { existsSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";

/** The workspace root: the nearest folder above this file holding pnpm-workspace.yaml. */
export function repoRoot(): string {
  let dir = dirname(fileURLToPath(import.meta.url));
  for (;;) {
    if (existsSync(join(dir, "pnpm-workspace.yaml"))) return dir;
    const parent = resolve(dir, "..");
    if (parent === dir) throw new Error("tether: cannot find the workspace root (pnpm-workspace.yaml)");
    dir = parent;
  }
}

/** Ignored folder for downloads and service state. */
export function cacheDir(): string {
  return join(repoRoot(), ".cache");
}
