import { execFile, spawn } from "node:child_process";
import { cpSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTestContext, type TestContext } from "@tether/testkit";
import { packPublishedPackages, scratchEnv } from "../../scripts/pack-packages.ts";

const repoRoot = fileURLToPath(new URL("../../", import.meta.url));
const scratchSources = fileURLToPath(new URL("./scratch-app/", import.meta.url));

interface Run {
  code: number;
  stdout: string;
  stderr: string;
}

function run(cmd: string, args: string[], cwd: string, env: Record<string, string> = {}, timeout = 300_000): Promise<Run> {
  return new Promise((resolve) => {
    execFile(cmd, args, { cwd, env: { ...scratchEnv(), ...env }, timeout, maxBuffer: 16 * 1024 * 1024 }, (err, stdout, stderr) => {
      const code = err ? (typeof (err as { code?: unknown }).code === "number" ? (err as { code: number }).code : -1) : 0;
      resolve({ code, stdout, stderr });
    });
  });
}

async function ok(cmd: string, args: string[], cwd: string, env: Record<string, string> = {}): Promise<string> {
  const r = await run(cmd, args, cwd, env);
  if (r.code !== 0) throw new Error(`${cmd} ${args.join(" ")} exited ${r.code}\n${r.stderr}\n${r.stdout}`);
  return r.stdout;
}

describe("the published packages, packed and installed into a project outside the workspace", () => {
  let ctx: TestContext;
  let scratch: string;
  let app: string;
  let env: Record<string, string>;

  beforeAll(async () => {
    ctx = await createTestContext();
    env = { DATABASE_URL: ctx.databaseUrl, ELASTICSEARCH_URL: ctx.elasticsearchUrl, TETHER_INDEX_PREFIX: ctx.indexPrefix, LOG_LEVEL: "warn" };
    scratch = mkdtempSync(join(tmpdir(), "tether-pack-"));
    app = join(scratch, "app");
    const local = await packPublishedPackages(repoRoot, join(scratch, "tarballs"));
    cpSync(scratchSources, app, { recursive: true });
    writeFileSync(
      join(app, "package.json"),
      JSON.stringify(
        {
          name: "tether-scratch-app",
          private: true,
          type: "module",
          dependencies: { ...local, kysely: "^0.29.9", pg: "^8.23.1" },
          devDependencies: { typescript: "5.9.3", "@types/node": "^24.10.0", "@types/pg": "^8.23.1" },
          // The packages depend on each other by version: resolve those to the tarballs too.
          pnpm: { overrides: local },
        },
        null,
        2,
      ),
    );
    await ok("pnpm", ["install", "--no-frozen-lockfile", "--reporter=silent", "--config.confirmModulesPurge=false"], app);
  }, 900_000);

  afterAll(async () => {
    if (scratch) rmSync(scratch, { recursive: true, force: true });
    await ctx?.close();
  });

  it("ships only dist, types and metadata: no sources, no deep imports", async () => {
    const manifest = JSON.parse(await ok("node", ["-p", "JSON.stringify(require('@tether/core/package.json'))"], app)) as Record<string, unknown>;
    expect(manifest).toMatchObject({ license: "MIT", types: "./dist/index.d.ts" });
    expect(manifest.private).toBeUndefined();
    expect(JSON.stringify(manifest.exports)).not.toContain("source");
    expect(readdirSync(join(app, "node_modules/@tether/core")).sort()).toEqual(["LICENSE", "README.md", "dist", "package.json"]);
    for (const deep of ["@tether/core/src/index.ts", "@tether/core/dist/drain/drainer.js"]) {
      const r = await run("node", ["--input-type=module", "-e", `await import(${JSON.stringify(deep)})`], app);
      expect(r.code, deep).not.toBe(0);
      expect(r.stderr).toContain("ERR_PACKAGE_PATH_NOT_EXPORTED");
    }
  });

  it("type-checks the app against the shipped declarations", async () => {
    const r = await run(join(app, "node_modules/.bin/tsc"), ["-p", "."], app);
    expect(r.code, r.stdout + r.stderr).toBe(0);
  });

  it("migrates, writes with a job, drains into Elasticsearch and reports status through the installed bins", async () => {
    const migrated = JSON.parse(await ok(join(app, "node_modules/.bin/tether"), ["migrate", "--json"], app, env)) as { applied: unknown[] };
    expect(migrated.applied).toContainEqual({ namespace: "shop", id: 1, name: "product" });

    const result = JSON.parse(await ok("node", ["app.ts"], app, env)) as { id: string; version: string; drained: Record<string, number>; state: unknown };
    expect(result.drained).toMatchObject({ claimed: 1, repaired: 1 });
    expect(result.state).toEqual({ version: Number(result.version), deleted: false });
    const doc = (await (await fetch(new URL(`/${ctx.indexPrefix}products/_doc/${result.id}`, ctx.elasticsearchUrl))).json()) as { found: boolean; _source: Record<string, unknown> };
    expect(doc.found).toBe(true);
    expect(doc._source).toMatchObject({ name: "Teapot", price_cents: 2450 });

    const status = JSON.parse(await ok(join(app, "node_modules/.bin/tether"), ["status", "--json"], app, env)) as { total: number; parked: number };
    expect(status).toMatchObject({ total: 0, parked: 0 });
  });

  it("starts the installed tether-drainer on the app's tether.config.ts and stops it cleanly", async () => {
    const child = spawn(join(app, "node_modules/.bin/tether-drainer"), [], { cwd: app, env: { ...scratchEnv(), ...env, LOG_LEVEL: "info", METRICS_PORT: "0" }, stdio: ["ignore", "pipe", "pipe"] });
    const exited = new Promise<number | null>((resolve) => child.once("exit", (code) => resolve(code)));
    try {
      const listening = await new Promise<Record<string, unknown>>((resolve, reject) => {
        let buffered = "";
        let stderr = "";
        child.stderr.setEncoding("utf8").on("data", (c: string) => (stderr += c));
        child.stdout.setEncoding("utf8").on("data", (c: string) => {
          buffered += c;
          for (const line of buffered.split("\n").slice(0, -1)) {
            const parsed = JSON.parse(line) as Record<string, unknown>;
            if (parsed.msg === "listening") resolve(parsed);
          }
          buffered = buffered.slice(buffered.lastIndexOf("\n") + 1);
        });
        void exited.then((code) => reject(new Error(`tether-drainer exited ${String(code)} before listening\n${stderr}`)));
      });
      expect(listening.collections).toEqual(["sync_product"]);
      const health = await fetch(`http://127.0.0.1:${String(listening.port)}/healthz`);
      expect(health.status).toBe(200);
    } finally {
      child.kill("SIGTERM");
    }
    expect(await exited).toBe(0);
  });
});
