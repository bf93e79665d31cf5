import { spawn, spawnSync, type ChildProcess } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { sql } from "kysely";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { insertJobs } from "@tether/core/internal";
import { createTestContext, waitFor, type TestContext } from "@tether/testkit";
import { spawnDrainer, type DrainerProcess } from "../../services/drainer/test/drainer-process.js";

const repoRoot = fileURLToPath(new URL("../..", import.meta.url));

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = createServer();
    srv.once("error", reject);
    srv.listen(0, "127.0.0.1", () => {
      const addr = srv.address();
      srv.close(() => (typeof addr === "object" && addr ? resolve(addr.port) : reject(new Error("no port"))));
    });
  });
}


interface PromAlert {
  labels: { alertname: string };
  state: "pending" | "firing";
}

describe("the Tether alert rules in a real Prometheus scraping a real drainer", () => {
  let ctx: TestContext;
  let drainer: DrainerProcess | undefined;
  let prometheus: ChildProcess | undefined;
  let promExited: Promise<unknown> | undefined;
  let promUrl: string;
  let promLog = "";
  let scratch: string | undefined;

  beforeAll(async () => {
    const install = spawnSync("bash", ["scripts/install-prometheus"], { cwd: repoRoot, encoding: "utf8", timeout: 600_000 });
    if (install.status !== 0) throw new Error(`scripts/install-prometheus failed (${install.status}):\n${install.stdout}${install.stderr}`);

    ctx = await createTestContext();
    drainer = await spawnDrainer({
      DATABASE_URL: ctx.databaseUrl,
      ELASTICSEARCH_URL: ctx.elasticsearchUrl,
      TETHER_INDEX_PREFIX: ctx.indexPrefix,
      TETHER_DRAIN_INTERVAL_MS: "300",
      TETHER_MAINTENANCE_INTERVAL_MS: "300",
    });

    // The production rules, with every `for:` shortened so the test runs in seconds.
    scratch = mkdtempSync(join(tmpdir(), "tether-prom-e2e-"));
    const rules = readFileSync(join(repoRoot, "infra/prometheus/tether-rules.yml"), "utf8").replace(/^(\s*)for: \S+$/gm, "$1for: 4s");
    expect(rules).toContain("for: 4s");
    writeFileSync(join(scratch, "tether-rules.yml"), rules);
    writeFileSync(
      join(scratch, "prometheus.yml"),
      [
        "global:",
        "  scrape_interval: 1s",
        "  evaluation_interval: 1s",
        "rule_files:",
        "  - tether-rules.yml",
        "scrape_configs:",
        "  - job_name: tether-drainer",
        "    static_configs:",
        `      - targets: ["127.0.0.1:${drainer.port}"]`,
        "",
      ].join("\n"),
    );
    const port = await freePort();
    promUrl = `http://127.0.0.1:${port}`;
    prometheus = spawn(
      "prometheus",
      [
        `--config.file=${join(scratch, "prometheus.yml")}`,
        `--storage.tsdb.path=${join(scratch, "data")}`,
        `--web.listen-address=127.0.0.1:${port}`,
        "--log.level=warn",
      ],
      { stdio: ["ignore", "pipe", "pipe"] },
    );
    prometheus.stdout!.on("data", (d: Buffer) => (promLog += d.toString()));
    prometheus.stderr!.on("data", (d: Buffer) => (promLog += d.toString()));
    promExited = new Promise((r) => prometheus!.once("exit", r));
    await waitFor(async () => (await fetch(`${promUrl}/-/ready`)).ok, { what: `prometheus ready\n${promLog}`, timeoutMs: 60_000, intervalMs: 250, ignoreErrors: true });
  }, 900_000);

  afterAll(async () => {
    if (prometheus && prometheus.exitCode === null) {
      prometheus.kill("SIGTERM");
      await promExited;
    }
    if (drainer && drainer.child.exitCode === null) {
      drainer.child.kill("SIGTERM");
      await drainer.exited;
    }
    drainer?.kill();
    await ctx?.close();
    if (scratch) rmSync(scratch, { recursive: true, force: true });
  });

  const query = async (expr: string): Promise<number | undefined> => {
    const res = await fetch(`${promUrl}/api/v1/query?query=${encodeURIComponent(expr)}`);
    const body = (await res.json()) as { data: { result: { value: [number, string] }[] } };
    const v = body.data.result[0]?.value[1];
    return v === undefined ? undefined : Number(v);
  };

  it("scrapes the drainer's gauges", async () => {
    const parked = await waitFor(() => query("max(tether_jobs_parked)"), { what: "tether_jobs_parked scraped", timeoutMs: 60_000, intervalMs: 250, ignoreErrors: true });
    expect(parked).toBe(0);
    expect(await query("max(tether_jobs_expired)")).toBe(0);
  });

  it("takes TetherParkedJobs and TetherExpiredJobs from pending to firing for real parked and expired jobs", async () => {
    // A job no collection handles is parked on the next pass; one past its expiry is swept.
    await insertJobs(ctx.db, [{ name: "sync_ghost", entityId: "1", priority: 1, tag: "live", delayMs: 0 }]);
    await insertJobs(ctx.db, [{ name: "sync_annotation", entityId: "999999", priority: 1, tag: "live", delayMs: 3_600_000 }]);
    await sql`UPDATE tether.job SET expires_at = now() - interval '1 second' WHERE name = 'sync_annotation'`.execute(ctx.db);

    const seen = new Map<string, Set<string>>();
    await waitFor(
      async () => {
        const res = await fetch(`${promUrl}/api/v1/alerts`);
        const body = (await res.json()) as { data: { alerts: PromAlert[] } };
        for (const a of body.data.alerts) {
          const states = seen.get(a.labels.alertname) ?? new Set<string>();
          states.add(a.state);
          seen.set(a.labels.alertname, states);
        }
        const firing = (n: string) => seen.get(n)?.has("firing");
        return firing("TetherParkedJobs") && firing("TetherExpiredJobs") ? true : undefined;
      },
      { what: `both alerts firing (seen: ${JSON.stringify([...seen].map(([k, v]) => [k, [...v]]))})\n${promLog}`, timeoutMs: 90_000, intervalMs: 200, ignoreErrors: true },
    );
    for (const name of ["TetherParkedJobs", "TetherExpiredJobs"]) expect([...seen.get(name)!]).toEqual(["pending", "firing"]);
    expect(await query("max(tether_jobs_parked)")).toBe(1);
    expect(await query("max(tether_jobs_expired)")).toBe(1);
  });
});
