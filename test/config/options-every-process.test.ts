import { spawn } from "node:child_process";
import { execFile } from "node:child_process";
import { fileURLToPath } from "node:url";
import { sql } from "kysely";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { indexReadiness, migrate, sinkEnvironment, sinkFromConfig, writerFromConfig, type AlertsReport } from "@tether/core";
import { createTestContext, startFaultProxy, type TestContext } from "@tether/testkit";
import { spawnDrainer, type DrainerProcess } from "../../services/drainer/test/drainer-process.js";
import config from "./fixtures/every-option.config.ts";
import { gadgetMigrations, gadgets } from "./fixtures/gadgets.ts";

const repoRoot = fileURLToPath(new URL("../../", import.meta.url));
const file = "test/config/fixtures/every-option.config.ts";
const token = "every-option-token";

interface JobSeen {
  tag: string;
  priority: number;
  grace_ms: number;
}

// The thresholds a process evaluated, by alert.
const thresholds = (r: Pick<AlertsReport, "alerts">) => Object.fromEntries(r.alerts.map((a) => [a.name, a.threshold]));
const configured = { queue_length_high: 4_321, parked_jobs: 6, expired_jobs: 5 };

describe("one tether.config.ts drives every process: its options reach the app's writer and sink, the API, the admin routes, the CLI and the drainer", () => {
  let ctx: TestContext;
  let env: Record<string, string>;
  let drainer: DrainerProcess | undefined;
  let api: ReturnType<typeof spawn> | undefined;

  beforeAll(async () => {
    ctx = await createTestContext();
    env = { DATABASE_URL: ctx.databaseUrl, ELASTICSEARCH_URL: ctx.elasticsearchUrl, TETHER_INDEX_PREFIX: ctx.indexPrefix, LOG_LEVEL: "warn", TETHER_CONFIG: file };
    await migrate(ctx.db, [gadgetMigrations]);
  });
  afterAll(async () => {
    drainer?.kill();
    api?.kill("SIGKILL");
    await ctx.close();
  });

  const jobOf = async (name: string, id: string) => {
    const r = await sql<JobSeen>`SELECT tag, priority, round(extract(epoch FROM scheduled_at - enqueued_at) * 1000)::int AS grace_ms
      FROM tether.job WHERE name = ${name} AND kwargs->>'id' = ${id}`.execute(ctx.db);
    return r.rows;
  };

  it("an application process builds its sink and writer from the config and the environment the CLI reads", async () => {
    const sink = sinkFromConfig(config, env);
    const writer = writerFromConfig(config, { sink });
    try {
      // The deploy step (`tether migrate`) creates the index behind its alias; writes never do.
      expect(await indexReadiness(sink, config.collections, { create: true })).toMatchObject([{ collection: "gadget", state: "created" }]);
      const { changes, sync } = await writer.createWithJob(ctx.db, gadgets, { label: "from-app" });
      expect(sync).toBe("ok");
      const id = changes[0]!.id;
      expect(await jobOf(gadgets.jobName, id)).toEqual([{ tag: "every-option", priority: 7, grace_ms: 4_321 }]);
      // The document is in the prefixed index, the one the drainer and the CLI verify.
      const doc = (await (await fetch(new URL(`/${ctx.indexPrefix}gadgets/_doc/${id}`, ctx.elasticsearchUrl))).json()) as { found: boolean };
      expect(doc.found).toBe(true);
    } finally {
      await sink.close?.();
    }
    expect(sinkEnvironment(env)).toEqual({
      kind: "elasticsearch",
      urlVariable: "ELASTICSEARCH_URL",
      url: ctx.elasticsearchUrl,
      indexPrefix: ctx.indexPrefix,
      connection: { url: { variable: "ELASTICSEARCH_URL", value: ctx.elasticsearchUrl } },
    });
    expect(sinkEnvironment({ TETHER_SINK: "opensearch", OPENSEARCH_URL: "http://os:9200" })).toMatchObject({ kind: "opensearch", url: "http://os:9200", indexPrefix: "" });
    expect(() => sinkEnvironment({ TETHER_SINK: "solr" })).toThrow(/TETHER_SINK: must be one of elasticsearch, opensearch/);
  });

  it("an application's writer waits out the config's direct-sync timeout, not the default, when the engine hangs", async () => {
    const proxy = await startFaultProxy({ target: ctx.elasticsearchUrl });
    await proxy.setMode("hang");
    const sink = sinkFromConfig(config, { ...env, ELASTICSEARCH_URL: proxy.url });
    const writer = writerFromConfig(config, { sink, breaker: false });
    try {
      const started = performance.now();
      const { sync } = await writer.createWithJob(ctx.db, gadgets, { label: "engine hangs" });
      expect(sync).toBe("timeout");
      // options.writer.directSyncTimeoutMs is 1234 (the default is 500): a lower bound only.
      expect(performance.now() - started).toBeGreaterThanOrEqual(1_200);
    } finally {
      await Promise.all([sink.close?.(), proxy.close()]);
    }
  });

  it("the CLI evaluates the config's alert thresholds", async () => {
    const r = await new Promise<{ code: number; stdout: string; stderr: string }>((resolve) => {
      execFile(process.execPath, ["--conditions=source", "--import", "tsx", "packages/cli/src/main.ts", "alerts", "--json"], { cwd: repoRoot, env: { PATH: process.env.PATH ?? "", ...env } }, (err, stdout, stderr) =>
        resolve({ code: err ? Number((err as { code?: number }).code) : 0, stdout, stderr }),
      );
    });
    expect(r.code, r.stderr).toBe(0);
    expect(thresholds(JSON.parse(r.stdout) as AlertsReport)).toMatchObject(configured);
  });

  it("the drainer takes the config's batch size, its environment's fan-out chunk size over the config's, and serves its alert thresholds", async () => {
    drainer = await spawnDrainer({ ...env, LOG_LEVEL: "info", TETHER_FANOUT_CHUNK_SIZE: "55" });
    expect(drainer.logs.find((l) => l.msg === "listening")).toMatchObject({ batchSize: 3, intervalMs: 3_600_000, fanoutChunkSize: 55 });
    const alerts = (await (await fetch(`http://127.0.0.1:${drainer.port}/alerts`)).json()) as AlertsReport;
    expect(thresholds(alerts)).toMatchObject(configured);
    drainer.child.kill("SIGTERM");
    expect(await drainer.exited).toBe(0);
  });

  it("the reference API writes with the config's writer options and its admin routes evaluate the config's thresholds", async () => {
    const child = spawn(process.execPath, ["--conditions=source", "--import", "tsx", "services/annotations-api/src/main.ts"], {
      cwd: repoRoot,
      env: { PATH: process.env.PATH ?? "", ...env, LOG_LEVEL: "info", PORT: "0", TETHER_ADMIN_TOKEN: token },
      stdio: ["ignore", "pipe", "pipe"],
    });
    api = child;
    const port = await new Promise<number>((resolve, reject) => {
      let out = "";
      let err = "";
      child.stderr!.setEncoding("utf8").on("data", (c: string) => (err += c));
      child.stdout!.setEncoding("utf8").on("data", (c: string) => {
        out += c;
        const m = /"port":(\d+)[^\n]*"msg":"listening"/.exec(out);
        if (m) resolve(Number(m[1]));
      });
      child.once("exit", (code) => reject(new Error(`the API exited ${String(code)}\n${err}\n${out}`)));
    });
    // The API ensures its index in the background, serving writes meanwhile (their direct sync
    // fails and their jobs are made due at once): write once the alias answers.
    await expect.poll(async () => (await fetch(new URL(`/${ctx.indexPrefix}annotations`, ctx.elasticsearchUrl), { method: "HEAD" })).status, { timeout: 60_000, interval: 200 }).toBe(200);
    const created = await fetch(`http://127.0.0.1:${port}/api/annotations`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ user: "acct:ann@example.com", uri: "https://example.com/every-option" }),
    });
    expect(created.status).toBe(201);
    const { id } = (await created.json()) as { id: string };
    expect(await jobOf("sync_annotation", String(id))).toEqual([{ tag: "every-option", priority: 7, grace_ms: 4_321 }]);
    const alerts = await fetch(`http://127.0.0.1:${port}/admin/alerts`, { headers: { authorization: `Bearer ${token}` } });
    expect(alerts.status).toBe(200);
    expect(thresholds((await alerts.json()) as AlertsReport)).toMatchObject(configured);
    const exited = new Promise((resolve) => child.once("exit", resolve));
    child.kill("SIGTERM");
    await exited;
  });
});
