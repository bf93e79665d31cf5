/**
 * Builds and packs the published packages into tarballs, as a registry would serve them: shared
 * by the pack-and-install test and scripts/newcomer-path.ts. Plain Node (type stripping).
 */
import { execFile } from "node:child_process";
import { readdirSync } from "node:fs";
import { dirname, join } from "node:path";

/** The published packages, by workspace folder. */
export const PUBLISHED_PACKAGES = {
  "@tether/core": "packages/core",
  "@tether/search-sink": "packages/search-sink",
  "@tether/elasticsearch": "packages/elasticsearch",
  "@tether/service-kit": "packages/service-kit",
  "@tether/cli": "packages/cli",
  "@tether/drainer": "services/drainer",
} as const;

export type PublishedPackage = keyof typeof PUBLISHED_PACKAGES;

/**
 * The environment of a child run in a scratch project: this Node first on PATH (bins run
 * `#!/usr/bin/env node`), the rest as is (the registry may only be reachable through its proxy
 * settings), but without what the workspace's own runners set (pnpm's npm_config_*, vitest's,
 * NODE_OPTIONS, TETHER_*).
 */
export function scratchEnv(): Record<string, string | undefined> {
  return {
    ...Object.fromEntries(Object.entries(process.env).filter(([k]) => !/^(npm_|pnpm_|VITEST|NODE_OPTIONS$|TETHER_)/i.test(k))),
    PATH: `${dirname(process.execPath)}:${process.env.PATH ?? ""}`,
  };
}

function pnpm(args: string[], cwd: string): Promise<void> {
  return new Promise((resolve, reject) => {
    execFile("pnpm", args, { cwd, env: scratchEnv(), timeout: 600_000, maxBuffer: 16 * 1024 * 1024 }, (err, stdout, stderr) => {
      if (err) reject(new Error(`pnpm ${args.join(" ")} failed in ${cwd}\n${stderr}\n${stdout}`));
      else resolve();
    });
  });
}

/** Builds the published packages and packs each into `dest`; returns a `file:` spec per package. */
export async function packPublishedPackages(repoRoot: string, dest: string): Promise<Record<PublishedPackage, string>> {
  const names = Object.keys(PUBLISHED_PACKAGES) as PublishedPackage[];
  await pnpm(["exec", "turbo", "run", "build", ...names.flatMap((name) => ["--filter", name]), "--output-logs=errors-only"], repoRoot);
  for (const name of names) await pnpm(["pack", "--pack-destination", dest], join(repoRoot, PUBLISHED_PACKAGES[name]));
  const files = readdirSync(dest);
  const spec = (name: string) => {
    const file = files.find((f) => f.startsWith(`${name.slice(1).replace("/", "-")}-`));
    if (!file) throw new Error(`no tarball of ${name} in ${dest}`);
    return `file:${join(dest, file)}`;
  };
  return Object.fromEntries(names.map((name) => [name, spec(name)])) as Record<PublishedPackage, string>;
}
