import { execFileSync, spawnSync } from "node:child_process";
import { existsSync, mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";

/** Where the ref worktrees live: `.cache/bench-against/<commit>` of this checkout (git-ignored). */
const worktreesDir = (repo: string) => join(repo, ".cache", "bench-against");

/** The full commit a ref names, or an error that says which ref. */
export function resolveCommit(repo: string, ref: string): string {
  try {
    return execFileSync("git", ["rev-parse", "--verify", "--quiet", `${ref}^{commit}`], { cwd: repo, encoding: "utf8" }).trim();
  } catch {
    throw new Error(`--against ${ref}: not a commit in ${repo}`);
  }
}

function run(cmd: string, args: string[], cwd: string, log: (m: string) => void): boolean {
  log(`${cwd}: ${cmd} ${args.join(" ")}`);
  // Their output is progress: stderr, as the rest of the run's (stdout carries the table).
  const r = spawnSync(cmd, args, { cwd, stdio: ["ignore", 2, 2] });
  return r.status === 0;
}

/**
 * A detached worktree of `commit` with its dependencies installed, made once and reused by later
 * runs: `git worktree add`, then `pnpm install --offline` (the store this checkout installed
 * from), falling back to a networked `pnpm install --frozen-lockfile` when the store lacks a
 * package of the ref's lockfile.
 */
export function prepareRefWorktree(repo: string, commit: string, log: (m: string) => void): string {
  const dir = join(worktreesDir(repo), commit.slice(0, 12));
  const installed = `${dir}.installed`;
  if (existsSync(installed)) return dir;
  mkdirSync(worktreesDir(repo), { recursive: true });
  if (!existsSync(join(dir, ".git"))) {
    if (!run("git", ["worktree", "add", "--detach", dir, commit], repo, log)) throw new Error(`git worktree add ${dir} ${commit} failed`);
  }
  if (!run("pnpm", ["install", "--offline", "--frozen-lockfile"], dir, log) && !run("pnpm", ["install", "--frozen-lockfile"], dir, log)) {
    throw new Error(`pnpm install failed in ${dir}`);
  }
  writeFileSync(installed, `${commit}\n`);
  return dir;
}
