import { execFile } from "node:child_process";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createWriter, migrate } from "@tether/core";
import { createTestContext, type TestContext } from "@tether/testkit";
import { spawnDrainer, type DrainerProcess } from "../../services/drainer/test/drainer-process.js";
import { gadgetMigrations, gadgets } from "./fixtures/gadgets.ts";

const repoRoot = fileURLToPath(new URL("../../", import.meta.url));
const fixture = (name: string) => `test/config/fixtures/${name}.config.ts`;

interface Exit {
  code: number;
  stdout: string;
  stderr: string;
}

function runNode(args: string[], env: Record<string, string>): Promise<Exit> {
  return new Promise((resolve) => {
    execFile(process.execPath, ["--conditions=source", "--import", "tsx", ...args], { cwd: repoRoot, env: { PATH: process.env.PATH ?? "", ...env }, timeout: 90_000 }, (err, stdout, stderr) => {
      const code = err ? (typeof (err as { code?: unknown }).code === "number" ? (err as { code: number }).code : -1) : 0;
      resolve({ code, stdout, stderr });
    });
  });
}

describe("tether.config.ts, loaded by the CLI and the drainer daemon", () => {
  let ctx: TestContext;
  let drainer: DrainerProcess | undefined;
  let env: Record<string, string>;
  beforeAll(async () => {
    ctx = await createTestContext();
    env = { DATABASE_URL: ctx.databaseUrl, ELASTICSEARCH_URL: ctx.elasticsearchUrl, TETHER_INDEX_PREFIX: ctx.indexPrefix, LOG_LEVEL: "warn" };
  });
  afterAll(async () => {
    drainer?.kill();
    await ctx.close();
  });

  const cli = (args: string[], extra: Record<string, string> = {}) => runNode(["packages/cli/src/main.ts", ...args], { ...env, ...extra });
  const daemon = (extra: Record<string, string>, args: string[] = []) =>
    runNode(["services/drainer/src/main.ts", ...args], { ...env, METRICS_PORT: "0", ...extra });

  const cases: { name: string; file: string; field: string; message: RegExp }[] = [
    { name: "a missing file", file: "test/config/fixtures/absent.config.ts", field: "file", message: /not found/ },
    { name: "no collections", file: fixture("no-collections"), field: "collections", message: /non-empty array/ },
    { name: "a table Postgres does not have", file: fixture("unknown-table"), field: "collections[0].table", message: /table "gadgets" .* does not exist/ },
    { name: "an unknown option", file: fixture("unknown-option"), field: "options.drainer.batchsize", message: /unknown option/ },
  ];

  const api = (extra: Record<string, string>) => runNode(["services/annotations-api/src/main.ts"], { ...env, PORT: "0", ...extra });

  for (const c of cases) {
    it(`stops the CLI (exit 2), the daemon and the API (exit 1) at start on ${c.name}, naming the file and the field`, async () => {
      const [viaFlag, viaEnv, viaDaemon, viaApi] = await Promise.all([
        cli(["migrate", "--config", c.file]),
        cli(["status", "--json"], { TETHER_CONFIG: c.file }),
        daemon({ TETHER_CONFIG: c.file }),
        api({ TETHER_CONFIG: c.file }),
      ]);
      for (const r of [viaFlag, viaEnv]) {
        expect(r.code, r.stderr).toBe(2);
        expect(r.stderr).toContain(`${c.file}: ${c.field}: `);
        expect(r.stderr).toMatch(c.message);
      }
      expect(viaDaemon.code, viaDaemon.stderr).toBe(1);
      expect(viaDaemon.stderr).toContain(`tether-drainer: ${c.file}: ${c.field}: `);
      expect(viaDaemon.stderr).toMatch(c.message);
      expect(viaApi.code, viaApi.stderr).toBe(1);
      expect(viaApi.stderr).toContain(`annotations-api: ${c.file}: ${c.field}: `);
    });
  }

  it("a version column the table does not have is a table to adopt: the CLI's verbs (exit 2) and the API (exit 1) stop naming the file, the field and `tether adopt`; tether migrate reports it and exits 0; the daemon serves on", async () => {
    const file = fixture("unknown-version-column");
    const field = "collections[0].versionColumn: ";
    const message = 'column "version" does not exist in table "gadget" (collection "gadget"); an existing table is brought under tether with `tether adopt gadget`';
    const [viaFlag, viaEnv, viaApi] = await Promise.all([cli(["status", "--json", "--config", file]), cli(["status", "--json"], { TETHER_CONFIG: file }), api({ TETHER_CONFIG: file })]);
    for (const r of [viaFlag, viaEnv]) {
      expect(r.code, r.stderr).toBe(2);
      expect(r.stderr).toContain(`${file}: ${field}${message}`);
    }
    expect(viaApi.code, viaApi.stderr).toBe(1);
    expect(viaApi.stderr).toContain(`annotations-api: ${file}: ${field}`);
    // A deploy step, not a typo tether can tell apart: migrate names the command and succeeds.
    const migrated = await cli(["migrate", "--json", "--config", file]);
    expect(migrated.code, migrated.stderr).toBe(0);
    expect(JSON.parse(migrated.stdout)).toMatchObject({ needsAdoption: [{ collection: "gadget", table: "gadget", missing: ["version"], command: "tether adopt gadget" }] });
    drainer = await spawnDrainer({ ...env, LOG_LEVEL: "info", TETHER_CONFIG: file });
    expect(drainer.logs.find((l) => l.msg === "collection needs adopting; served once adopted")).toMatchObject({ collection: "gadget", missing: ["version"], command: "tether adopt gadget" });
    drainer.child.kill("SIGTERM");
    expect(await drainer.exited).toBe(0);
  });

  it("the CLI applies the config's migrations and honours its options; flags still win", async () => {
    const migrated = await cli(["migrate", "--json", "--config", fixture("gadgets")]);
    expect(migrated.code, migrated.stderr).toBe(0);
    // The daemon cases above may have applied it already; either way it is recorded now.
    expect(JSON.parse(migrated.stdout)).toHaveProperty("applied");
    const again = await cli(["migrate"], { TETHER_CONFIG: fixture("gadgets") });
    expect(again.stdout).toContain("schema is up to date");
    const writer = createWriter({ graceMs: 0 });
    for (const label of ["a", "b", "c"]) await writer.createWithJob(ctx.db, gadgets, { label }, { directSync: false });

    const once = await cli(["drain", "--once", "--json"], { TETHER_CONFIG: fixture("gadgets") });
    expect(once.code, once.stderr).toBe(0);
    expect(JSON.parse(once.stdout)).toMatchObject({ claimed: 2, repaired: 2 });
    const flagged = await cli(["drain", "--once", "--json", "--batch-size", "5", "--config", fixture("gadgets")]);
    expect(JSON.parse(flagged.stdout)).toMatchObject({ claimed: 1, repaired: 1 });
    const states = await ctx.sink.fetchStates(gadgets.index, ["1", "2", "3"]);
    expect([...states.keys()].sort()).toEqual(["1", "2", "3"]);
  });

  it("the daemon drains a collection it knows only from TETHER_CONFIG, with the config's options", async () => {
    await migrate(ctx.db, [gadgetMigrations]);
    const writer = createWriter({ graceMs: 0 });
    const created = await writer.createWithJob(ctx.db, gadgets, { label: "from-daemon" }, { directSync: false });
    drainer = await spawnDrainer({ ...env, LOG_LEVEL: "info", TETHER_CONFIG: fixture("gadgets") });
    const listening = drainer.logs.find((l) => l.msg === "listening")!;
    expect(listening).toMatchObject({ collections: ["sync_gadget"], batchSize: 2, intervalMs: 3_600_000 });
    await drainer.waitForLog((l) => l.msg === "drain pass" && Number((l.pass as { repaired?: number }).repaired) >= 1);
    const states = await ctx.sink.fetchStates(gadgets.index, [created.changes[0]!.id]);
    expect(states.get(created.changes[0]!.id)).toMatchObject({ version: Number((created.row as { revision: string }).revision), deleted: false });
    drainer.child.kill("SIGTERM");
    expect(await drainer.exited).toBe(0);
  });
});
