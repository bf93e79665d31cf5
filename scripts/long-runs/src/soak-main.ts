import { randomBytes } from "node:crypto";
import { createDb, Drainer, migrate, verifyCollection, type DrainResult } from "@tether/core";
import { annotationMigrations, annotations } from "@tether/annotations";
import { ElasticsearchSink } from "@tether/elasticsearch";
import { sql } from "kysely";
import { auditAnnotations, createScratchDatabase, ensureElasticsearch, startFaultProxy, startLiveLoad, startPrivatePostgres, type FaultMode, type PrivatePostgres } from "@tether/testkit";
import { buildApp } from "../../../services/annotations-api/src/app.js";

export interface SoakOptions {
  databaseUrl: string;
  elasticsearchUrl: string;
  /** Wall-clock length of the flapping phase. */
  minutes: number;
  /** Concurrent API clients. Default 4. */
  concurrency?: number;
  /** Keep the soak database and index afterwards. Default false. */
  keep?: boolean;
  /** Progress lines go here. Default stderr. */
  log?: (line: string) => void;
  /**
   * A Postgres of the soak's own (at `databaseUrl`) to restart this many times, evenly spread
   * over the flapping phase, alternating a clean (fast) and a crash (immediate) restart.
   */
  restartable?: { server: PrivatePostgres; restarts: number };
}

export interface SoakReport {
  minutes: number;
  database: string;
  indexPrefix: string;
  writes: { calls: number; byStatus: Record<string, number> };
  faults: { mode: string; seconds: number }[];
  postgresRestarts: { atSecond: number; mode: string; ms: number }[];
  proxy: Record<string, unknown>;
  drainer: { passes: number; failedPasses: number; repaired: number; retried: number };
  finalDrain: { passes: number; ms: number };
  rows: number;
  liveRows: number;
  lost: number;
  stale: number;
  duplicates: number;
  jobsLeft: number;
  parked: number;
  verify: { driftedTotal: number; bucketsCompared: number; durationMs: number };
  peakRssMb: number;
  durationMs: number;
}

/** One cycle of Elasticsearch misbehaviour; each phase lasts `seconds` (scaled to the run). */
const CYCLE: { mode: FaultMode; seconds: number; label: string }[] = [
  { mode: { kind: "pass" }, seconds: 15, label: "pass" },
  { mode: { kind: "hang" }, seconds: 10, label: "hang" },
  { mode: { kind: "pass" }, seconds: 5, label: "pass" },
  { mode: { kind: "refuse" }, seconds: 8, label: "refuse" },
  { mode: { kind: "status", status: 429 }, seconds: 8, label: "429" },
  { mode: { kind: "dropBulkItems", fraction: 0.2, forge: true }, seconds: 12, label: "drop 20% (forged 200 OK)" },
  { mode: { kind: "status", status: 503 }, seconds: 6, label: "503" },
  { mode: { kind: "cut" }, seconds: 5, label: "cut mid-response" },
  { mode: { kind: "latency", ms: 100, jitterMs: 900 }, seconds: 10, label: "latency 100-1000 ms" },
  { mode: { kind: "reset" }, seconds: 5, label: "reset" },
];

/**
 * Sustained writes through the API (in-process) with the drainer running, while Elasticsearch
 * flaps through the fault proxy; then heal, drain until empty, and count what was lost.
 */
export async function runSoak(opts: SoakOptions): Promise<SoakReport> {
  const log = opts.log ?? ((l: string) => process.stderr.write(`${l}\n`));
  const started = performance.now();
  const run = `${Date.now().toString(36)}${randomBytes(2).toString("hex")}`;
  const database = `tether_soak_${run}`;
  const indexPrefix = `soak_${run}_`;
  let peakRss = process.memoryUsage().rss;
  const rssTimer = setInterval(() => (peakRss = Math.max(peakRss, process.memoryUsage().rss)), 1_000);

  const scratch = await createScratchDatabase(opts.databaseUrl, database);
  const db = createDb({ connectionString: scratch.url, max: 20, applicationName: "tether-soak" });
  const direct = new ElasticsearchSink({ client: opts.elasticsearchUrl, indexPrefix });
  const proxy = await startFaultProxy({ target: opts.elasticsearchUrl });
  const flaky = new ElasticsearchSink({ client: proxy.url, indexPrefix, requestTimeoutMs: 5_000 });
  let app: Awaited<ReturnType<typeof buildApp>> | undefined;
  let drainer: Drainer | undefined;
  try {
    await migrate(db, [annotationMigrations]);
    await direct.ensureIndex(annotations.index, annotations.mappings);
    app = await buildApp({ db, sink: flaky, searchSink: direct, graceMs: 5_000, directSyncTimeoutMs: 500 });
    await app.listen({ port: 0, host: "127.0.0.1" });
    const address = app.server.address();
    const apiUrl = `http://127.0.0.1:${typeof address === "object" && address ? address.port : 0}`;

    drainer = new Drainer({ db, sink: flaky, collections: [annotations], intervalMs: 1_000, batchSize: 1_000, deadlineMs: 20_000 });
    const passes = { passes: 0, failedPasses: 0, repaired: 0, retried: 0 };
    drainer.on("batch", (r: DrainResult) => {
      passes.passes += 1;
      if (r.error) passes.failedPasses += 1;
      passes.repaired += r.repaired + r.deleted_downstream;
      passes.retried += r.retried;
    });
    drainer.start();

    const load = startLiveLoad(apiUrl, { concurrency: opts.concurrency ?? 4, editEvery: 4, deleteEvery: 10 });
    const faults: { mode: string; seconds: number }[] = [];
    const flapStarted = Date.now();
    const endAt = flapStarted + opts.minutes * 60_000;
    const postgresRestarts: SoakReport["postgresRestarts"] = [];
    const restarts: Promise<void>[] = [];
    const timers: NodeJS.Timeout[] = [];
    const r = opts.restartable;
    for (let k = 1; r && k <= r.restarts; k++) {
      const mode = k % 2 === 1 ? "fast" : "immediate";
      const at = (opts.minutes * 60_000 * k) / (r.restarts + 1);
      timers.push(
        setTimeout(() => {
          const t = performance.now();
          log(`[soak] restarting Postgres (${mode})`);
          restarts.push(
            r.server.restart(mode).then(() => {
              postgresRestarts.push({ atSecond: Math.round((Date.now() - flapStarted) / 1000), mode, ms: Math.round(performance.now() - t) });
              log(`[soak] Postgres back after ${Math.round(performance.now() - t)} ms`);
            }),
          );
        }, at),
      );
    }
    const scale = Math.max(0.2, Math.min(1, opts.minutes / 2));
    for (let i = 0; Date.now() < endAt; i++) {
      const phase = CYCLE[i % CYCLE.length]!;
      const seconds = Math.min((endAt - Date.now()) / 1000, Math.max(2, phase.seconds * scale));
      await proxy.setMode(phase.mode);
      const at = Date.now();
      await new Promise((r) => setTimeout(r, seconds * 1000));
      faults.push({ mode: phase.label, seconds: Math.round((Date.now() - at) / 100) / 10 });
      log(`[soak] ${Math.round((endAt - Date.now()) / 1000)} s left; ${load.calls.length} calls; phase ${phase.label} done; queue passes ${passes.passes} (${passes.failedPasses} failed)`);
    }
    for (const t of timers) clearTimeout(t);
    await Promise.all(restarts);
    await load.stop();
    await proxy.setMode("pass");
    await drainer.stop();
    drainer = undefined;
    log(`[soak] load stopped after ${load.calls.length} calls; Elasticsearch healed; draining`);

    // Heal: drain until the queue is empty, straight to Elasticsearch. Jobs that failed through
    // the flapping sit on backoffs of up to 5 minutes; make them due now, as an operator would
    // once the outage is over, instead of waiting them out.
    const healStarted = performance.now();
    await sql`UPDATE tether.job SET scheduled_at = now() WHERE scheduled_at > now()`.execute(db);
    const healer = new Drainer({ db, sink: direct, collections: [annotations], batchSize: 2_500 });
    let finalPasses = 0;
    for (;;) {
      const r = await healer.drainOnce();
      finalPasses += 1;
      const left = Number((await sql<{ n: string }>`SELECT count(*) AS n FROM tether.job`.execute(db)).rows[0]!.n);
      if (left === 0) break;
      if (finalPasses % 20 === 0) log(`[soak] final drain: ${finalPasses} passes, ${left} jobs left`);
      if (performance.now() - healStarted > 10 * 60_000) break;
      if (r.claimed === 0) await new Promise((res) => setTimeout(res, 500));
    }
    const finalMs = performance.now() - healStarted;
    const audit = await auditAnnotations(db, direct);
    const verify = await verifyCollection(db, direct, annotations, { enqueue: false });
    const byStatus: Record<string, number> = {};
    for (const c of load.calls) byStatus[String(c.status)] = (byStatus[String(c.status)] ?? 0) + 1;
    clearInterval(rssTimer);
    peakRss = Math.max(peakRss, process.memoryUsage().rss);
    return {
      minutes: opts.minutes,
      database,
      indexPrefix,
      writes: { calls: load.calls.length, byStatus },
      faults,
      postgresRestarts,
      proxy: { ...proxy.stats },
      drainer: passes,
      finalDrain: { passes: finalPasses, ms: Math.round(finalMs) },
      rows: audit.rows,
      liveRows: audit.liveRows,
      lost: audit.lost.length,
      stale: audit.stale.length,
      duplicates: audit.duplicates.length,
      jobsLeft: audit.jobs,
      parked: audit.parked,
      verify: { driftedTotal: verify.driftedTotal, bucketsCompared: verify.bucketsCompared, durationMs: Math.round(verify.durationMs) },
      peakRssMb: Math.round(peakRss / 1024 / 1024),
      durationMs: Math.round(performance.now() - started),
    };
  } finally {
    clearInterval(rssTimer);
    await drainer?.stop();
    await app?.close();
    await proxy.close();
    await flaky.close();
    await db.destroy();
    if (!opts.keep) {
      await fetch(new URL(`/${indexPrefix}*?expand_wildcards=all`, opts.elasticsearchUrl), { method: "DELETE" }).catch(() => undefined);
      await scratch.drop();
    }
    await direct.close();
  }
}

/**
 * Command line of `scripts/soak`: `--minutes N` (default 2), `--concurrency N`,
 * `--postgres-restarts N` (default 2), `--keep`, `--json`. With restarts the soak runs on a
 * Postgres server of its own (the machine's binaries, a temporary data directory), never on
 * DATABASE_URL's: restarting a shared server would break everyone else's work.
 */
export async function soakMain(argv: readonly string[]): Promise<number> {
  const arg = (name: string) => {
    const i = argv.indexOf(name);
    return i >= 0 ? argv[i + 1] : undefined;
  };
  const minutes = Number(arg("--minutes") ?? "2");
  const concurrency = Number(arg("--concurrency") ?? "4");
  const restarts = Number(arg("--postgres-restarts") ?? "2");
  if (!(minutes > 0) || !(concurrency >= 1) || !(Number.isInteger(restarts) && restarts >= 0)) {
    process.stderr.write("usage: scripts/soak [--minutes 2] [--concurrency 4] [--postgres-restarts 2] [--keep] [--json]\n");
    return 2;
  }
  const elasticsearchUrl = process.env.ELASTICSEARCH_URL ?? (await ensureElasticsearch()).url;
  const server = await startPrivatePostgres();
  let report: SoakReport;
  try {
    report = await runSoak({ databaseUrl: server.url, elasticsearchUrl, minutes, concurrency, keep: argv.includes("--keep"), restartable: { server, restarts } });
  } finally {
    if (!argv.includes("--keep")) await server.close();
  }
  if (argv.includes("--json")) process.stdout.write(`${JSON.stringify(report, null, 2)}\n`);
  else {
    process.stdout.write(
      [
        `soak: ${report.minutes} min of flapping Elasticsearch, ${report.writes.calls} API calls ${JSON.stringify(report.writes.byStatus)}`,
        `  faults: ${report.faults.map((f) => `${f.mode} ${f.seconds}s`).join(", ")}`,
        `  Postgres restarts: ${report.postgresRestarts.map((p) => `${p.mode} at ${p.atSecond}s (${p.ms} ms)`).join(", ") || "none"}`,
        `  drainer: ${report.drainer.passes} passes (${report.drainer.failedPasses} failed), final drain ${report.finalDrain.passes} passes in ${report.finalDrain.ms} ms`,
        `  rows ${report.rows} (live ${report.liveRows}); lost ${report.lost}, stale ${report.stale}, duplicate ${report.duplicates}; jobs left ${report.jobsLeft}, parked ${report.parked}`,
        `  verify: ${report.verify.driftedTotal} drifted over ${report.verify.bucketsCompared} buckets in ${report.verify.durationMs} ms; peak RSS ${report.peakRssMb} MB; total ${Math.round(report.durationMs / 1000)} s`,
      ].join("\n") + "\n",
    );
  }
  return report.lost + report.stale + report.duplicates + report.jobsLeft + report.parked === 0 ? 0 : 1;
}
