/**
 * Builds and packs the published packages into tarballs, as a registry would serve them, for a
 * project that installs Tether before a version is on a registry:
 *
 *   scripts/pack-packages <your-app>/tether-packages
 *   cd <your-app> && pnpm add ./tether-packages/tether-core.tgz …
 *
 * Each tarball is named `tether-<name>.tgz` (no version) and its dependencies on the other
 * `@tether/*` packages point at their tarballs beside it (`file:./tether-packages/…`, resolved
 * from the installing project's root): the folder must be `tether-packages` in the project's
 * root, and no `pnpm.overrides` is needed. Shared by the pack-and-install test and
 * scripts/newcomer-path.ts. Plain Node (type stripping).
 */
import { execFile } from "node:child_process";
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { basename, dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";

/** The published packages, by workspace folder. */
export const PUBLISHED_PACKAGES = {
  "@tether/core": "packages/core",
  "@tether/search-sink": "packages/search-sink",
  "@tether/elasticsearch": "packages/elasticsearch",
  "@tether/opensearch": "packages/opensearch",
  "@tether/service-kit": "packages/service-kit",
  "@tether/cli": "packages/cli",
  "@tether/drainer": "services/drainer",
} as const;

export type PublishedPackage = keyof typeof PUBLISHED_PACKAGES;

/** The folder, in the installing project's root, the tarballs' internal dependencies point at. */
export const TARBALL_FOLDER = "tether-packages";

/** `@tether/core` → `tether-core.tgz`. */
export const tarballName = (name: string) => `${name.slice(1).replace("/", "-")}.tgz`;

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

function exec(cmd: string, args: string[], cwd: string): Promise<void> {
  return new Promise((resolve, reject) => {
    execFile(cmd, args, { cwd, env: scratchEnv(), timeout: 600_000, maxBuffer: 16 * 1024 * 1024 }, (err, stdout, stderr) => {
      if (err) reject(new Error(`${cmd} ${args.join(" ")} failed in ${cwd}\n${stderr}\n${stdout}`));
      else resolve();
    });
  });
}

// Points the packed manifest's @tether/* dependencies at the sibling tarballs.
async function rewriteInternalDependencies(tarball: string): Promise<void> {
  const work = mkdtempSync(join(tmpdir(), "tether-pack-"));
  try {
    await exec("tar", ["-xzf", tarball, "-C", work], work);
    const file = join(work, "package", "package.json");
    const manifest = JSON.parse(readFileSync(file, "utf8")) as Record<string, Record<string, string> | undefined>;
    for (const field of ["dependencies", "optionalDependencies", "peerDependencies"]) {
      for (const dep of Object.keys(manifest[field] ?? {})) {
        if (dep in PUBLISHED_PACKAGES) manifest[field]![dep] = `file:./${TARBALL_FOLDER}/${tarballName(dep)}`;
      }
    }
    writeFileSync(file, `${JSON.stringify(manifest, null, 2)}\n`);
    await exec("tar", ["-czf", tarball, "-C", work, "package"], work);
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
}

/**
 * Builds the published packages and packs each into `dest` as `tether-<name>.tgz`, internal
 * dependencies rewritten to the sibling tarballs; returns the path of each tarball.
 */
export async function packPublishedPackages(repoRoot: string, dest: string): Promise<Record<PublishedPackage, string>> {
  const names = Object.keys(PUBLISHED_PACKAGES) as PublishedPackage[];
  mkdirSync(dest, { recursive: true });
  await exec("pnpm", ["exec", "turbo", "run", "build", ...names.flatMap((name) => ["--filter", name]), "--output-logs=errors-only"], repoRoot);
  const out = {} as Record<PublishedPackage, string>;
  for (const name of names) {
    const staging = mkdtempSync(join(tmpdir(), "tether-packed-"));
    try {
      await exec("pnpm", ["pack", "--pack-destination", staging], join(repoRoot, PUBLISHED_PACKAGES[name]));
      const packed = readdirSync(staging).find((f) => f.endsWith(".tgz"));
      if (!packed) throw new Error(`pnpm pack left no tarball of ${name}`);
      const target = join(dest, tarballName(name));
      renameSync(join(staging, packed), target);
      await rewriteInternalDependencies(target);
      out[name] = target;
    } finally {
      rmSync(staging, { recursive: true, force: true });
    }
  }
  return out;
}

// `node scripts/pack-packages.ts <dest>` (what scripts/pack-packages runs).
if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const dest = resolve(process.argv[2] ?? TARBALL_FOLDER);
  if (basename(dest) !== TARBALL_FOLDER) process.stderr.write(`pack-packages: note: the tarballs refer to each other as ./${TARBALL_FOLDER}/…; install from a folder of that name in your project's root\n`);
  const packed = await packPublishedPackages(fileURLToPath(new URL("../", import.meta.url)), dest);
  process.stdout.write(`${Object.values(packed).join("\n")}\n`);
}
