import { execFile } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, readdirSync, rmSync, symlinkSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, describe, expect, it } from "vitest";

const repoRoot = fileURLToPath(new URL("../../", import.meta.url));

function sh(command: string, cwd: string): Promise<{ code: number; out: string }> {
  return new Promise((resolve) => {
    // No GIT_* from the runner: the copy must not find this checkout's repository.
    const env = Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith("GIT_")));
    execFile("bash", ["-c", command], { cwd, env: { ...env, GIT_CEILING_DIRECTORIES: tmpdir() }, maxBuffer: 64 * 1024 * 1024 }, (err, stdout, stderr) =>
      resolve({ code: err ? Number((err as { code?: number }).code ?? -1) : 0, out: stdout + stderr }),
    );
  });
}

describe("the API reference builds anywhere", () => {
  const copy = mkdtempSync(join(tmpdir(), "tether-no-git-"));
  afterAll(() => rmSync(copy, { recursive: true, force: true }));

  it("scripts/docs succeeds in a copy of the checkout without .git, and in one with no remote, linking sources through the packages' repository field", { timeout: 600_000 }, async () => {
    // The tree as a tarball would carry it (this checkout may itself have no .git), with the
    // installed dependencies beside it.
    const skip = [".git", "node_modules", ".cache", ".turbo", "dist", "docs/api", "web-dist"].map((p) => `--exclude=${JSON.stringify(p)}`).join(" ");
    const files = await sh(`tar ${skip} -cf - . | tar -C ${JSON.stringify(copy)} -xf -`, repoRoot);
    expect(files.code, files.out).toBe(0);
    symlinkSync(join(repoRoot, "node_modules"), join(copy, "node_modules"));
    for (const dir of ["packages", "services"]) {
      for (const pkg of readdirSync(join(repoRoot, dir))) {
        const modules = join(repoRoot, dir, pkg, "node_modules");
        if (existsSync(modules) && existsSync(join(copy, dir, pkg))) symlinkSync(modules, join(copy, dir, pkg, "node_modules"));
      }
    }
    expect(existsSync(join(copy, ".git"))).toBe(false);
    expect((await sh("git rev-parse --is-inside-work-tree", copy)).code).not.toBe(0);

    const docs = await sh("bash scripts/docs", copy);
    expect(docs.code, docs.out).toBe(0);
    const page = readFileSync(join(copy, "docs/api/functions/_tether_core.defineConfig.html"), "utf8");
    const repository = (JSON.parse(readFileSync(join(repoRoot, "packages/core/package.json"), "utf8")) as { repository: { url: string } }).repository.url.replace(/^git\+/, "").replace(/\.git$/, "");
    expect(page).toContain(`${repository}/blob/v`);
    expect(page).toMatch(/packages\/core\/src\/config\/tether-config\.ts#L\d+/);

    // A repository with no remote at all (a fork whose remote has another name, a fresh init):
    // links at the checked-out commit.
    const init = await sh("git init -q && git add -A && git -c user.name=newcomer -c user.email=newcomer@example.com commit -qm snapshot && git rev-parse HEAD", copy);
    expect(init.code, init.out).toBe(0);
    expect((await sh("git remote", copy)).out.trim()).toBe("");
    const again = await sh("bash scripts/docs", copy);
    expect(again.code, again.out).toBe(0);
    const linked = readFileSync(join(copy, "docs/api/functions/_tether_core.defineConfig.html"), "utf8");
    expect(linked).toContain(`${repository}/blob/${init.out.trim()}/packages/core/src/config/tether-config.ts#L`);
  });
});
