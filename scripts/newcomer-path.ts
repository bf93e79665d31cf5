/**
 * Measures a newcomer's path from `pnpm add` to a synced document, following the README's "Use
 * Tether in your app" on the packages as they would be published:
 *
 *   node scripts/newcomer-path.ts [--cold] [--keep]
 *
 * Preparation (not timed): builds and packs the published packages into tarballs. Then, in a
 * fresh project outside the workspace, timed step by step:
 *   1. the README's step 1 on the tarballs: pnpm add of core, elasticsearch, kysely, pg, @opentelemetry/api; -D cli, drainer
 *   2. the collection and tether.config.ts of the README (copied from docs/examples)
 *   3. tether migrate
 *   4. tether-drainer started (its "listening" line: index ensured, loop running)
 *   5. one createWithJob (the row and its job commit, direct sync after COMMIT)
 *   6. the document found in Elasticsearch, at the row's version
 * `--cold` installs with an empty pnpm store (everything fetched from the registry); by default
 * the machine's store is used, as on a developer's machine that has installed anything before.
 * Needs DATABASE_URL (a server where it may CREATE DATABASE) and ELASTICSEARCH_URL; its
 * database, index and scratch folder are removed afterwards unless --keep.
 */
import { execFile, spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import { copyFileSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";
import { packPublishedPackages, scratchEnv, TARBALL_FOLDER } from "./pack-packages.ts";

const args = parseArgs({ options: { cold: { type: "boolean" }, keep: { type: "boolean" } }, strict: true }).values;
const repoRoot = fileURLToPath(new URL("../", import.meta.url));
const databaseUrl = process.env.DATABASE_URL;
const elasticsearchUrl = process.env.ELASTICSEARCH_URL ?? "http://127.0.0.1:9200";
if (!databaseUrl) {
  process.stderr.write("newcomer-path: set DATABASE_URL (a Postgres server where a database may be created)\n");
  process.exit(2);
}

function run(cmd: string, argv: string[], cwd: string, env: Record<string, string> = {}): Promise<string> {
  return new Promise((resolve, reject) => {
    execFile(cmd, argv, { cwd, env: { ...scratchEnv(), ...env }, maxBuffer: 64 * 1024 * 1024 }, (err, stdout, stderr) => {
      if (err) reject(new Error(`${cmd} ${argv.join(" ")} failed: ${stderr || err.message}\n${stdout}`));
      else resolve(stdout);
    });
  });
}

const steps: { step: string; seconds: number }[] = [];
async function timed<T>(step: string, fn: () => Promise<T>): Promise<T> {
  const t0 = performance.now();
  const value = await fn();
  const seconds = (performance.now() - t0) / 1000;
  steps.push({ step, seconds });
  process.stderr.write(`  ${seconds.toFixed(2).padStart(7)} s  ${step}\n`);
  return value;
}

const suffix = randomBytes(3).toString("hex");
const dbName = `tether_newcomer_${suffix}`;
const indexPrefix = `newcomer_${suffix}_`;
const appDatabaseUrl = (() => {
  const u = new URL(databaseUrl);
  u.pathname = `/${dbName}`;
  return u.toString();
})();
const scratch = mkdtempSync(join(tmpdir(), "tether-newcomer-"));
const app = join(scratch, "shop");
const tarballs = join(app, TARBALL_FOLDER);
const appEnv = { DATABASE_URL: appDatabaseUrl, ELASTICSEARCH_URL: elasticsearchUrl, TETHER_INDEX_PREFIX: indexPrefix, LOG_LEVEL: "warn" };
// Runs SQL on the server through the scratch project's own `pg` (the workspace root has none).
const adminSql = (statement: string) =>
  run("node", ["--input-type=module", "-e", `import pg from "pg"; const c = new pg.Client(${JSON.stringify(databaseUrl)}); await c.connect(); await c.query(${JSON.stringify(statement)}); await c.end();`], app);

let drainer: ReturnType<typeof spawn> | undefined;
let created = false;
try {
  process.stderr.write("preparing (not timed): build and pack the published packages\n");
  await packPublishedPackages(repoRoot, tarballs);
  mkdirSync(join(app, "src"), { recursive: true });
  // The tarballs point at each other in ./tether-packages: no overrides, as the README says.
  writeFileSync(join(app, "package.json"), `${JSON.stringify({ name: "shop", private: true, type: "module" }, null, 2)}\n`);
  const local = (name: string) => `./${TARBALL_FOLDER}/${name}.tgz`;
  const store = args.cold ? ["--store-dir", join(scratch, "store")] : [];

  process.stderr.write(`timed, in ${app}${args.cold ? " (empty pnpm store)" : ""}:\n`);
  await timed("1. pnpm add (core, elasticsearch, kysely, pg, @opentelemetry/api; -D cli, drainer)", async () => {
    await run("pnpm", ["add", local("tether-core"), local("tether-elasticsearch"), "kysely", "pg", "@opentelemetry/api@~1.9.0", "--reporter=silent", ...store], app);
    await run("pnpm", ["add", "-D", local("tether-cli"), local("tether-drainer"), "--reporter=silent", ...store], app);
  });
  await timed("2. collection + tether.config.ts (the README's files)", async () => {
    copyFileSync(join(repoRoot, "docs/examples/src/products-collection.ts"), join(app, "src/products-collection.ts"));
    copyFileSync(join(repoRoot, "docs/examples/tether.config.ts"), join(app, "tether.config.ts"));
    writeFileSync(
      join(app, "write-one.ts"),
      [
        'import { createDb, sinkFromConfig, writerFromConfig } from "@tether/core";',
        'import config from "./tether.config.ts";',
        'import { products } from "./src/products-collection.ts";',
        "const db = createDb({ connectionString: process.env.DATABASE_URL! });",
        "const sink = sinkFromConfig(config, process.env);",
        "try {",
        "  const { row, sync } = await writerFromConfig(config, { sink }).createWithJob(db, products, { name: \"Teapot\", price_cents: 2450 });",
        "  process.stdout.write(JSON.stringify({ id: String(row?.id), version: Number(row?.version), sync }));",
        "} finally {",
        "  await db.destroy();",
        "  await sink.close?.();",
        "}",
        "",
      ].join("\n"),
    );
  });
  await adminSql(`CREATE DATABASE ${dbName}`);
  created = true;
  await timed("3. tether migrate", () => run(join(app, "node_modules/.bin/tether"), ["migrate"], app, appEnv));
  await timed("4. tether-drainer started (listening)", async () => {
    const child = spawn(join(app, "node_modules/.bin/tether-drainer"), [], { cwd: app, env: { ...scratchEnv(), ...appEnv, LOG_LEVEL: "info", METRICS_PORT: "0" }, stdio: ["ignore", "pipe", "pipe"] });
    drainer = child;
    await new Promise<void>((resolve, reject) => {
      let out = "";
      let err = "";
      child.stderr!.setEncoding("utf8").on("data", (c: string) => (err += c));
      child.stdout!.setEncoding("utf8").on("data", (c: string) => {
        out += c;
        if (/"msg":"listening"/.test(out)) resolve();
      });
      child.once("exit", (code) => reject(new Error(`tether-drainer exited ${String(code)}\n${err}\n${out}`)));
    });
  });
  const written = await timed("5. createWithJob (commit + direct sync)", async () => JSON.parse(await run("node", ["write-one.ts"], app, appEnv)) as { id: string; version: number; sync: string });
  const doc = await timed("6. document found in Elasticsearch", async () => {
    const res = await fetch(new URL(`/${indexPrefix}products/_doc/${written.id}`, elasticsearchUrl));
    return (await res.json()) as { found: boolean; _version?: number; _source?: Record<string, unknown> };
  });
  if (!doc.found || doc._version !== written.version || doc._source?.name !== "Teapot") throw new Error(`the document is not synced: ${JSON.stringify(doc)} (write: ${JSON.stringify(written)})`);
  const total = steps.reduce((s, x) => s + x.seconds, 0);
  process.stdout.write(`${JSON.stringify({ node: process.version, cold: Boolean(args.cold), directSync: written.sync, steps: steps.map((s) => ({ ...s, seconds: Number(s.seconds.toFixed(2)) })), totalSeconds: Number(total.toFixed(2)) }, null, 2)}\n`);
} finally {
  if (drainer && drainer.exitCode === null) {
    const exited = new Promise((resolve) => drainer!.once("exit", resolve));
    drainer.kill("SIGTERM");
    await exited;
  }
  if (!args.keep) {
    await fetch(new URL(`/${indexPrefix}*`, elasticsearchUrl), { method: "DELETE" }).catch(() => undefined);
    if (created) await adminSql(`DROP DATABASE IF EXISTS ${dbName} WITH (FORCE)`).catch(() => undefined);
    rmSync(scratch, { recursive: true, force: true });
  }
}
