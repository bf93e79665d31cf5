import { execFile } from "node:child_process";
import { fileURLToPath } from "node:url";
import { sql } from "kysely";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { checkConfigSchema, ConfigError, createWriter, defineConfig, migrate, type ConfigWarning, type QueueStats } from "@tether/core";
import { elasticsearch } from "@tether/elasticsearch";
import { createTestContext, type TestContext } from "@tether/testkit";
import { gizmoCollection, gizmoMigrations, gizmos, type GizmoBreak } from "./fixtures/gizmos.ts";

const repoRoot = fileURLToPath(new URL("../../", import.meta.url));
const fixture = (name: string) => `test/config/fixtures/${name}.config.ts`;

interface Exit {
  code: number;
  stdout: string;
  stderr: string;
}

function runNode(args: string[], env: Record<string, string>): Promise<Exit> {
  return new Promise((resolve) => {
    execFile(process.execPath, ["--conditions=source", "--import", "tsx", ...args], { cwd: repoRoot, env: { PATH: process.env.PATH ?? "", ...env }, timeout: 120_000 }, (err, stdout, stderr) => {
      const code = err ? (typeof (err as { code?: unknown }).code === "number" ? (err as { code: number }).code : -1) : 0;
      resolve({ code, stdout, stderr });
    });
  });
}

describe("a collection's embeds, checked against the schema by tether migrate, tether status and every process at start", () => {
  let ctx: TestContext;
  let env: Record<string, string>;
  beforeAll(async () => {
    ctx = await createTestContext();
    env = { DATABASE_URL: ctx.databaseUrl, ELASTICSEARCH_URL: ctx.elasticsearchUrl, TETHER_INDEX_PREFIX: ctx.indexPrefix, LOG_LEVEL: "warn" };
    await migrate(ctx.db, [gizmoMigrations]);
  });
  afterAll(() => ctx.close());

  const cli = (args: string[], extra: Record<string, string> = {}) => runNode(["packages/cli/src/main.ts", ...args], { ...env, ...extra });
  const check = (broken: GizmoBreak, onWarning?: (w: ConfigWarning) => void) =>
    checkConfigSchema(ctx.db, { file: "tether.config.ts", config: defineConfig({ collections: [gizmoCollection(broken)], sink: elasticsearch() }) }, onWarning ? { onWarning } : {});

  const cases: { broken: GizmoBreak; field: string; message: string }[] = [
    { broken: "table", field: "collections[0].embeds.maker.table", message: 'table "gizmo_makers" of embed "maker" of collection "gizmo" does not exist in Postgres (did the migrations run?)' },
    { broken: "link-column", field: "collections[0].embeds.suppliers.on", message: 'column "code" does not exist in table "gizmo_supplier" (embed "suppliers" of collection "gizmo")' },
    { broken: "primary-key", field: "collections[0].embeds.parts.primaryKey", message: 'column "part_no" does not exist in table "gizmo_part" (embed "parts" of collection "gizmo")' },
    { broken: "column", field: "collections[0].embeds.maker.columns[0]", message: 'column "title" does not exist in table "gizmo_maker" (embed "maker" of collection "gizmo")' },
    {
      broken: "child-column",
      field: "collections[0].embeds.maker.on.id",
      message: 'column "makerid" does not exist in table "gizmo", the child of embed "maker" of collection "gizmo" (on: { id: "makerid" })',
    },
    {
      broken: "through-child-column",
      field: "collections[0].embeds.suppliers.on.id",
      message: 'column "supplier" does not exist in table "gizmo_part", the child of embed "suppliers" of collection "gizmo" (on: { id: "supplier" })',
    },
  ];

  for (const c of cases) {
    it(`refuses ${c.broken === "table" ? "an embedded table" : `a ${c.broken.replace(/-/g, " ")}`} Postgres does not have, naming the collection, the embed and the table or column`, async () => {
      const err = await check(c.broken).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(ConfigError);
      expect(err).toMatchObject({ code: "E_CONFIG", file: "tether.config.ts", field: c.field, message: `tether.config.ts: ${c.field}: ${c.message}` });
    });
  }

  it("stops tether migrate, tether status (exit 2) and the daemon (exit 1) at start on an embed's missing column, naming the file and the field", async () => {
    const file = fixture("embed-unknown-column");
    const said = `${file}: collections[0].embeds.maker.on.id: column "makerid" does not exist in table "gizmo"`;
    const [migrated, status, daemon] = await Promise.all([
      cli(["migrate", "--config", file]),
      cli(["status", "--json"], { TETHER_CONFIG: file }),
      runNode(["services/drainer/src/main.ts"], { ...env, METRICS_PORT: "0", TETHER_CONFIG: file }),
    ]);
    for (const r of [migrated, status]) {
      expect(r.code, r.stderr).toBe(2);
      expect(r.stderr).toContain(said);
    }
    expect(daemon.code, daemon.stderr).toBe(1);
    expect(daemon.stderr).toContain(`tether-drainer: ${said}`);
  });

  it("warns, never fails, when a fan-out's chunks would scan a table for want of an index: tether migrate and tether status say which and the index to add", async () => {
    const warnings: ConfigWarning[] = [];
    await check("", (w) => warnings.push(w));
    // The maker's fan-out finds gizmos by gizmo.maker_id (no index); the suppliers' by gizmo_part.supplier_id (indexed).
    expect(warnings).toEqual([
      {
        file: "tether.config.ts",
        field: "collections[0].embeds.maker.on",
        message:
          'no index of table "gizmo" starts with column "maker_id": every chunk of a fan-out of embed "maker" (collection "gizmo") scans the table to find the documents a change reaches; add one, e.g. CREATE INDEX ON gizmo (maker_id, id)',
      },
    ]);

    const file = fixture("gizmos");
    const [json, text] = await Promise.all([cli(["migrate", "--json", "--config", file]), cli(["status"], { TETHER_CONFIG: file })]);
    expect(json.code, json.stderr).toBe(0);
    expect(JSON.parse(json.stdout).warnings).toEqual([{ ...warnings[0], file }]);
    expect(text.code, text.stderr).toBe(0);
    expect(text.stdout).toContain(`warning: ${file}: collections[0].embeds.maker.on: no index of table "gizmo" starts with column "maker_id"`);

    await sql`CREATE INDEX gizmo_maker_idx ON gizmo (maker_id, id)`.execute(ctx.db);
    const none: ConfigWarning[] = [];
    await check("", (w) => none.push(w));
    expect(none).toEqual([]);
    const after = await cli(["migrate", "--json", "--config", file]);
    expect(JSON.parse(after.stdout).warnings).toEqual([]);
  });

  it("tether status shows a fan-out in progress and fan-out work apart from live work; tether pause and resume take the fan-out lane", async () => {
    const file = fixture("gizmos");
    const maker = (await sql<{ id: string }>`INSERT INTO gizmo_maker (name) VALUES ('Acme') RETURNING id::text`.execute(ctx.db)).rows[0]!.id;
    await sql`INSERT INTO gizmo (label, maker_id) SELECT 'gizmo ' || g, ${maker}::bigint FROM generate_series(1, 3) g`.execute(ctx.db);
    // A rename through the writer: one fan-out job, whatever the number of gizmos.
    const renamed = await createWriter({ graceMs: 0 }).updateWithJob(ctx.db, gizmos.embed("maker"), maker, { name: "Acme Corp" });
    expect(renamed.fanouts).toBe(1);

    const paused = await cli(["pause", "fanout_gizmo", "--reason", "engine upgrade", "--json"], { TETHER_CONFIG: file });
    expect(paused.code, paused.stderr).toBe(0);
    expect(JSON.parse(paused.stdout)).toEqual({ paused: "fanout_gizmo", reason: "engine upgrade" });
    const [json, text, drained, unknown] = await Promise.all([
      cli(["status", "--json"], { TETHER_CONFIG: file }),
      cli(["status"], { TETHER_CONFIG: file }),
      cli(["drain", "--once", "--json"], { TETHER_CONFIG: file }),
      cli(["pause", "fanout_gadget"], { TETHER_CONFIG: file }),
    ]);
    expect(json.code, json.stderr).toBe(0);
    const s = JSON.parse(json.stdout) as QueueStats;
    expect(s).toMatchObject({ liveLength: 0, fanoutLength: 1, paused: [expect.objectContaining({ name: "fanout_gizmo", reason: "engine upgrade" })] });
    expect(s.fanouts).toEqual([expect.objectContaining({ name: "fanout_gizmo", collection: "gizmo", embed: "maker", link: maker, done: 0, total: null, attempts: 0, lastError: null, state: "due" })]);
    expect(text.stdout).toContain("fan-out work: 1 job(s), oldest due");
    expect(text.stdout).toContain("paused lanes: fanout_gizmo (engine upgrade)");
    expect(text.stdout).toMatch(/fan-outs in progress:\nCOLLECTION +EMBED +LINK +DONE\/TOTAL +STATE +ATTEMPTS +AGE +LAST ERROR\ngizmo +maker +\d+ +0\/\? +due +0 +[\d.]+ s +-/);
    // A paused fan-out lane is not expanded.
    expect(drained.code, drained.stderr).toBe(0);
    expect(JSON.parse(drained.stdout)).toMatchObject({ fanout: { claimed: 0 } });
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toContain('unknown lane "fanout_gadget"; configured: sync_gizmo (gizmo), fanout_gizmo (gizmo fan-out)');

    const resumed = await cli(["resume", "fanout_gizmo", "--json"], { TETHER_CONFIG: file });
    expect(JSON.parse(resumed.stdout)).toEqual({ resumed: "fanout_gizmo", wasPaused: true });
    const all = await cli(["drain", "--until-empty", "--json"], { TETHER_CONFIG: file });
    expect(all.code, all.stderr).toBe(0);
    const after = JSON.parse((await cli(["status", "--json"], { TETHER_CONFIG: file })).stdout) as QueueStats;
    expect(after).toMatchObject({ total: 0, fanoutLength: 0, fanouts: [] });
  });
});
