import { execFile, spawn, type ChildProcess } from "node:child_process";
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { sql } from "kysely";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTestContext, startLiveWriters, type TestContext } from "@tether/testkit";
import { PUBLISHED_PACKAGES, scratchEnv } from "../../scripts/pack-packages.ts";
import { APP_FILES, NO_OPTIONS_CONFIG } from "./app-files.ts";
import { readmePath } from "./readme-path.ts";

const repoRoot = fileURLToPath(new URL("../../", import.meta.url));
/** Rows of the newcomer's populated table that `tether adopt` brings under Tether. */
const TICKETS = 20_000;

interface Run {
  code: number;
  stdout: string;
  stderr: string;
}

function run(command: string, cwd: string, env: Record<string, string> = {}): Promise<Run> {
  return new Promise((resolve) => {
    execFile("bash", ["-c", command], { cwd, env: { ...scratchEnv(), ...env }, maxBuffer: 64 * 1024 * 1024 }, (err, stdout, stderr) => {
      const code = err ? (typeof (err as { code?: unknown }).code === "number" ? (err as { code: number }).code : -1) : 0;
      resolve({ code, stdout, stderr });
    });
  });
}

async function ok(command: string, cwd: string, env: Record<string, string> = {}): Promise<string> {
  const r = await run(command, cwd, env);
  if (r.code !== 0) throw new Error(`${command} exited ${r.code}\n${r.stderr}\n${r.stdout}`);
  return r.stdout;
}

interface Daemon {
  child: ChildProcess;
  logs: Record<string, unknown>[];
  exited: Promise<number | null>;
}

/** Starts the installed tether-drainer and resolves once it logs "listening". */
function startDrainer(app: string, env: Record<string, string>, args: string[] = []): Promise<Daemon> {
  const child = spawn(join(app, "node_modules/.bin/tether-drainer"), args, { cwd: app, env: { ...scratchEnv(), ...env, LOG_LEVEL: "info", METRICS_PORT: "0" }, stdio: ["ignore", "pipe", "pipe"] });
  const exited = new Promise<number | null>((resolve) => child.once("exit", (code) => resolve(code)));
  const logs: Record<string, unknown>[] = [];
  return new Promise((resolve, reject) => {
    let buffered = "";
    let stderr = "";
    child.stderr.setEncoding("utf8").on("data", (c: string) => (stderr += c));
    child.stdout.setEncoding("utf8").on("data", (c: string) => {
      buffered += c;
      const lines = buffered.split("\n");
      buffered = lines.pop() ?? "";
      for (const line of lines) {
        const parsed = JSON.parse(line) as Record<string, unknown>;
        logs.push(parsed);
        if (parsed.msg === "listening") resolve({ child, logs, exited });
      }
    });
    void exited.then((code) => reject(new Error(`tether-drainer exited ${String(code)} before listening\n${stderr}`)));
  });
}

async function stopDrainer(d: Daemon | undefined): Promise<number | null | undefined> {
  if (!d || d.child.exitCode !== null) return d?.child.exitCode;
  d.child.kill("SIGTERM");
  return d.exited;
}

describe("a newcomer's first day: the README's path, verbatim, on the packed tarballs in a project outside the workspace", () => {
  let ctx: TestContext;
  let helpdesk: TestContext;
  let scratch: string;
  let app: string;
  let env: Record<string, string>;
  let helpdeskEnv: Record<string, string>;
  let drainer: Daemon | undefined;
  let helpdeskDrainer: Daemon | undefined;
  const readme = readmePath(repoRoot);
  const install = { seconds: 0, warnings: [] as string[], output: "" };

  beforeAll(async () => {
    [ctx, helpdesk] = await Promise.all([createTestContext(), createTestContext()]);
    // Fresh databases: no tether schema until `tether migrate`.
    await Promise.all([sql`DROP SCHEMA tether CASCADE`.execute(ctx.db), sql`DROP SCHEMA tether CASCADE`.execute(helpdesk.db)]);
    env = { DATABASE_URL: ctx.databaseUrl, ELASTICSEARCH_URL: ctx.elasticsearchUrl, TETHER_INDEX_PREFIX: ctx.indexPrefix, LOG_LEVEL: "warn" };
    helpdeskEnv = { DATABASE_URL: helpdesk.databaseUrl, ELASTICSEARCH_URL: helpdesk.elasticsearchUrl, TETHER_INDEX_PREFIX: helpdesk.indexPrefix, LOG_LEVEL: "warn" };
    scratch = mkdtempSync(join(tmpdir(), "tether-newcomer-"));
    app = join(scratch, "my-app");
    mkdirSync(app);
    writeFileSync(join(app, "package.json"), `${JSON.stringify({ name: "my-app", private: true, type: "module" }, null, 2)}\n`);

    // Step 1, in the Tether checkout, then in the app: exactly the README's lines.
    await ok(readme.pack.replace("../my-app", app), repoRoot);
    const started = performance.now();
    for (const line of readme.install) {
      const r = await run(line, app);
      if (r.code !== 0) throw new Error(`${line} exited ${r.code}\n${r.stderr}\n${r.stdout}`);
      install.output += r.stdout + r.stderr;
    }
    install.seconds = (performance.now() - started) / 1000;
    install.warnings = install.output.split("\n").filter((l) => /\bWARN\b|unmet peer|✕/.test(l));
    // Not counted: the compiler the test checks the app with.
    await ok("pnpm add -D typescript@5.9.3 @types/node@^24.10.0 @types/pg@^8.23.1 --reporter=silent", app);

    // Steps 2-4 and 6: the README's files, verbatim, where docs/examples keeps them.
    for (const f of readme.files) {
      mkdirSync(dirname(join(app, f.path)), { recursive: true });
      writeFileSync(join(app, f.path), f.code);
      if (f.path.startsWith("src/")) {
        mkdirSync(join(app, "no-options", "src"), { recursive: true });
        writeFileSync(join(app, "no-options", f.path), f.code);
      }
    }
    writeFileSync(join(app, "no-options", "tether.config.ts"), NO_OPTIONS_CONFIG);
    for (const [name, code] of Object.entries(APP_FILES)) writeFileSync(join(app, name), code);
  }, 900_000);

  afterAll(async () => {
    await Promise.all([stopDrainer(drainer), stopDrainer(helpdeskDrainer)]);
    if (scratch) rmSync(scratch, { recursive: true, force: true });
    await Promise.all([ctx?.close(), helpdesk?.close()]);
  });

  it("installs with the README's commands alone: no unmet peer, no override, dist and types only", async () => {
    process.stderr.write(`newcomer install from tarballs: ${install.seconds.toFixed(1)} s, ${install.warnings.length} warning line(s)\n${install.warnings.join("\n")}\n`);
    expect(readme.install.length).toBeGreaterThanOrEqual(2);
    expect(install.output).not.toMatch(/unmet peer/);
    expect(install.warnings).toEqual([]);
    const manifest = JSON.parse(readFileSync(join(app, "package.json"), "utf8")) as Record<string, unknown>;
    expect(manifest.pnpm).toBeUndefined();
    // One copy of each package: the tarballs' internal dependencies resolved to the tarballs.
    expect(readdirSync(join(app, "node_modules/.pnpm")).filter((d) => d.startsWith("@tether+core@"))).toHaveLength(1);

    const core = JSON.parse(readFileSync(join(app, "node_modules/@tether/core/package.json"), "utf8")) as Record<string, unknown>;
    expect(core).toMatchObject({ license: "MIT", types: "./dist/index.d.ts" });
    expect(core.private).toBeUndefined();
    expect(JSON.stringify(core.exports)).not.toContain("source");
    expect(readdirSync(join(app, "node_modules/@tether/core")).sort()).toEqual(["LICENSE", "README.md", "dist", "package.json"]);
    for (const deep of ["@tether/core/src/index.ts", "@tether/core/dist/drain/drainer.js"]) {
      const r = await run(`node --input-type=module -e 'await import(${JSON.stringify(deep)})'`, app);
      expect(r.code, deep).not.toBe(0);
      expect(r.stderr).toContain("ERR_PACKAGE_PATH_NOT_EXPORTED");
    }
  });

  it("the release publishes exactly the packed packages: pnpm publish -r --dry-run, in the workflow changesets runs", async () => {
    const dry = await run("pnpm publish -r --dry-run", repoRoot);
    expect(dry.code, dry.stderr).toBe(0);
    const published = [...dry.stdout.matchAll(/^\+ (@tether\/[a-z-]+)@/gm)].map((m) => m[1]).sort();
    expect(published).toEqual(Object.keys(PUBLISHED_PACKAGES).sort());
    const workflow = readFileSync(join(repoRoot, ".github/workflows/release.yml"), "utf8");
    expect(workflow).toContain("publish: pnpm release");
    expect(workflow).toContain("id-token: write");
    const root = JSON.parse(readFileSync(join(repoRoot, "package.json"), "utf8")) as { scripts: Record<string, string> };
    expect(root.scripts.release).toContain("pnpm publish -r");
  });

  it("installs @tether/opensearch from its tarball the same way, public and importable", async () => {
    const r = await run("pnpm add ./tether-packages/tether-opensearch.tgz", app);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout + r.stderr).not.toMatch(/unmet peer|\bWARN\b/);
    const manifest = JSON.parse(readFileSync(join(app, "node_modules/@tether/opensearch/package.json"), "utf8")) as Record<string, unknown>;
    expect(manifest.private).toBeUndefined();
    expect(await ok(`node --input-type=module -e 'const m = await import("@tether/opensearch"); process.stdout.write(typeof m.opensearch)'`, app)).toBe("function");
  });

  it("migrates, writes through the README's handler, and the drainer serves the index it created with the declared mapping", async () => {
    const migrate = readme.run.find((l) => l.startsWith("pnpm exec tether migrate"))!;
    expect(await ok(migrate, app, env)).toMatch(/applied \d+ migration\(s\)/);
    drainer = await startDrainer(app, { ...env, TETHER_DRAIN_INTERVAL_MS: "1000" });

    const written = JSON.parse(await ok("node run-readme-app.ts", app, env)) as { id: string; version: string; alerts: { status: number; body: { alerts: { name: string; threshold: number }[] } } };
    // The direct sync after COMMIT: the document is there at once, at the row's version, in the prefixed index.
    const doc = (await (await fetch(new URL(`/${ctx.indexPrefix}products/_doc/${written.id}`, ctx.elasticsearchUrl))).json()) as { found: boolean; _version: number; _source: Record<string, unknown> };
    expect(doc).toMatchObject({ found: true, _version: Number(written.version), _source: { name: "Teapot", price_cents: 2450 } });
    const mapping = (await (await fetch(new URL(`/${ctx.indexPrefix}products/_mapping`, ctx.elasticsearchUrl))).json()) as Record<string, { mappings: { properties: Record<string, { type: string }> } }>;
    const properties = Object.values(mapping)[0]!.mappings.properties;
    expect(properties.name).toEqual({ type: "text" });
    expect(properties.price_cents).toEqual({ type: "integer" });
    // README step 6's handler: nothing firing, the config's threshold in force.
    expect(written.alerts.status).toBe(200);
    expect(written.alerts.body.alerts.find((a) => a.name === "queue_length_high")?.threshold).toBe(5000);
  });

  // Runs while the README write's grace period (60 s, the writer's default) passes.
  it("compiles the README's code with skipLibCheck off, against its config and against a config with no options", async () => {
    const r = await run("node_modules/.bin/tsc -p .", app);
    expect(r.code, r.stdout + r.stderr).toBe(0);
  });

  it(`adopts the newcomer's populated ${TICKETS}-row table as a deploy step under a live writer, a drainer already running`, async () => {
    await sql`CREATE TABLE ticket (id bigint GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY, subject text NOT NULL, status text NOT NULL)`.execute(helpdesk.db);
    await sql`INSERT INTO ticket (subject, status) SELECT 'ticket ' || g, 'open' FROM generate_series(1, ${TICKETS}) g`.execute(helpdesk.db);
    const migrated = JSON.parse(await ok("pnpm exec tether migrate --config helpdesk.config.ts --json", app, helpdeskEnv)) as { needsAdoption: { command: string }[] };
    expect(migrated.needsAdoption).toEqual([expect.objectContaining({ command: "tether adopt ticket" })]);
    helpdeskDrainer = await startDrainer(app, helpdeskEnv, ["--config", "helpdesk.config.ts"]);

    const writers = await startLiveWriters({
      connectionString: helpdesk.databaseUrl,
      writers: 2,
      writes: [
        { text: "INSERT INTO ticket (subject, status) VALUES ('filed during adoption', 'open')" },
        { text: "UPDATE ticket SET status = 'closed' WHERE id = $1", params: (r) => [1 + Math.floor(r() * TICKETS)] },
      ],
    });
    let adopted;
    try {
      adopted = JSON.parse(await ok("pnpm exec tether adopt ticket --capture --grace-ms 0 --config helpdesk.config.ts --json", app, helpdeskEnv)) as { enqueued: number; capture: boolean };
    } finally {
      const stats = await writers.stop();
      expect(stats.failed, stats.errors.join("; ")).toBe(0);
      expect(stats.ok).toBeGreaterThan(0);
    }
    expect(adopted).toMatchObject({ capture: true });
    expect(adopted.enqueued).toBeGreaterThanOrEqual(TICKETS);

    await expect
      .poll(async () => (JSON.parse(await ok("pnpm exec tether status --config helpdesk.config.ts --json", app, helpdeskEnv)) as { total: number }).total, { timeout: 300_000, interval: 1_000 })
      .toBe(0);
    const verify = JSON.parse(await ok("pnpm exec tether verify --config helpdesk.config.ts --json", app, helpdeskEnv)) as { driftedTotal: number };
    expect(verify.driftedTotal).toBe(0);
    const mapping = (await (await fetch(new URL(`/${helpdesk.indexPrefix}tickets/_mapping`, helpdesk.elasticsearchUrl))).json()) as Record<string, { mappings: { properties: Record<string, { type: string }> } }>;
    expect(Object.values(mapping)[0]!.mappings.properties).toMatchObject({ subject: { type: "text" }, status: { type: "keyword" } });
    expect(await stopDrainer(helpdeskDrainer)).toBe(0);
  });

  it("the README app's drainer confirms its job after the grace period; verify finds no drift and no alert fires", async () => {
    const status = readme.run.find((l) => l.startsWith("pnpm exec tether status"))!;
    await expect.poll(async () => (JSON.parse(await ok(status, app, env)) as { total: number }).total, { timeout: 300_000, interval: 1_000 }).toBe(0);
    expect(drainer!.logs.some((l) => l.msg === "drain pass" && Number((l.pass as { repaired?: number; up_to_date?: number }).up_to_date) >= 1)).toBe(true);
    const verify = JSON.parse(await ok("pnpm exec tether verify --json", app, env)) as { driftedTotal: number };
    expect(verify.driftedTotal).toBe(0);
    const alerts = await run("pnpm exec tether alerts --json", app, env);
    expect(alerts.code, alerts.stderr).toBe(0);
    expect((JSON.parse(alerts.stdout) as { firing: boolean }).firing).toBe(false);
    expect(await stopDrainer(drainer)).toBe(0);
  });
});
