import { spawn } from "node:child_process";
import { fileURLToPath } from "node:url";
import { sql } from "kysely";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createDb, migrate, rebuildIndex, runMaintenance } from "@tether/core";
import { annotations } from "@tether/annotations";
import { MAINTENANCE_LOCK } from "@tether/core/internal";
import {
  auditAnnotations,
  auditSummary,
  createScratchDatabase,
  startFaultProxy,
  startLiveLoad,
  startPgBouncer,
  waitFor,
  waitForProgress,
  type FaultProxy,
  type PgBouncer,
  type TestContext,
} from "@tether/testkit";
import { annotationBody, countRows, createAnnotationContext, insertRawAnnotations } from "../scenarios/support/annotation-context.js";
import { claimability, openClaims } from "../scenarios/support/locks.js";
import { spawnService, stopAll, type ServiceProcess } from "../scenarios/support/processes.js";
import { runTether } from "../support/tether-cli.js";

/**
 * Every Postgres connection of the writer, the API, the drainer and the CLI goes through a
 * PgBouncer in transaction mode (a server connection is a client's for one transaction only),
 * except the drainer's LISTEN session, which takes TETHER_LISTEN_DATABASE_URL: Postgres itself.
 * What must hold there: claims and confirms (row locks inside one transaction), the maintenance
 * leader (a transaction-scoped advisory lock), migrate from many processes at once (idem),
 * statements without server-side names (node-postgres sends unnamed ones), capture triggers,
 * and a SIGKILLed drainer's claims released (PgBouncer closes a server connection whose client
 * left mid-transaction).
 */
describe("Tether through PgBouncer in transaction mode", () => {
  let ctx: TestContext;
  let bouncer: PgBouncer;
  let pooled: string;
  let database: string;
  let proxy: FaultProxy;
  const procs: (ServiceProcess | undefined)[] = [];

  beforeAll(async () => {
    ctx = await createAnnotationContext();
    // A small pool: clients share server connections, so anything that leans on a session shows.
    bouncer = await startPgBouncer({ target: ctx.databaseUrl, poolMode: "transaction", poolSize: 4 });
    pooled = bouncer.urlFor(ctx.databaseUrl);
    database = new URL(ctx.databaseUrl).pathname.slice(1);
    proxy = await startFaultProxy({ target: ctx.elasticsearchUrl });
  });
  afterAll(async () => {
    await stopAll(procs);
    await proxy?.close();
    await bouncer?.close();
    await ctx?.close();
  });

  // The API's named statements need PgBouncer 1.21+ (max_prepared_statements); this one is older: off, as its docs say.
  const serviceEnv = (extra: Record<string, string> = {}) => ({ DATABASE_URL: pooled, ELASTICSEARCH_URL: ctx.elasticsearchUrl, TETHER_INDEX_PREFIX: ctx.indexPrefix, TETHER_PREPARED_STATEMENTS: "false", ...extra });

  it("migrates from several processes at once, and again, without a lock left behind on a pooled connection", async () => {
    const scratch = await createScratchDatabase(ctx.databaseUrl, `${database}_m`);
    const dbs = [0, 1, 2].map(() => createDb({ connectionString: bouncer.urlFor(scratch.url), max: 2 }));
    try {
      const runs = await Promise.all(dbs.map((db) => migrate(db)));
      // Each migration applied once, by one of them.
      const applied = runs.flatMap((r) => r.applied.map((m) => `${m.namespace}:${m.id}`));
      expect(applied.length).toBeGreaterThan(0);
      expect(new Set(applied).size).toBe(applied.length);
      // A session lock would now sit on some pooled server connection and block these.
      for (const db of dbs) expect((await migrate(db)).applied).toEqual([]);
    } finally {
      await Promise.all(dbs.map((db) => db.destroy()));
      await scratch.drop();
    }
  });

  it("prepares no named statement on the server: node-postgres and Kysely send unnamed ones", async () => {
    // One connection straight to Postgres, through which the writer writes and maintenance runs:
    // a named statement would stay in that session's pg_prepared_statements.
    const db = createDb({ connectionString: ctx.databaseUrl, max: 1 });
    try {
      await insertRawAnnotations(db, 3);
      await runMaintenance(db);
      await sql`SELECT count(*) FROM tether.job WHERE name = ${"sync_annotation"}`.execute(db);
      const named = await sql<{ n: string }>`SELECT count(*) AS n FROM pg_prepared_statements`.execute(db);
      expect(Number(named.rows[0]!.n)).toBe(0);
    } finally {
      await db.destroy();
    }
  });

  it("elects one maintenance leader with its transaction-scoped advisory lock", async () => {
    const a = createDb({ connectionString: pooled, max: 1 });
    const b = createDb({ connectionString: pooled, max: 1 });
    try {
      // `a` holds the leader's lock in an open transaction; `b` passes over it, then leads once it is gone.
      let release!: () => void;
      const held = new Promise<void>((r) => (release = r));
      let locked!: () => void;
      const isLocked = new Promise<void>((r) => (locked = r));
      const holder = a.transaction().execute(async (trx) => {
        await sql`SELECT pg_advisory_xact_lock(${MAINTENANCE_LOCK})`.execute(trx);
        locked();
        await held;
      });
      await isLocked;
      expect((await runMaintenance(b)).leader).toBe(false);
      release();
      await holder;
      expect((await runMaintenance(b)).leader).toBe(true);
    } finally {
      await Promise.all([a.destroy(), b.destroy()]);
    }
  });

  it("rebuilds an index through it, one at a time; a rebuild SIGKILLed mid-load leaves no lock behind on a pooled connection", async () => {
    const advisoryLocks = async () =>
      countRows(ctx.db, "SELECT count(*) AS n FROM pg_locks WHERE locktype = 'advisory' AND database = (SELECT oid FROM pg_database WHERE datname = current_database())");
    await insertRawAnnotations(ctx.db, 250);
    const db = createDb({ connectionString: pooled, max: 4 });
    const holder = createDb({ connectionString: pooled, max: 1 });
    try {
      // Another rebuild's lock, held in an open transaction through the pooler: this one is refused.
      let release!: () => void;
      const held = new Promise<void>((r) => (release = r));
      let locked!: () => void;
      const isLocked = new Promise<void>((r) => (locked = r));
      const other = holder.transaction().execute(async (trx) => {
        await sql`SELECT pg_advisory_xact_lock(hashtext(${"tether.index_rebuild:annotation"}))`.execute(trx);
        locked();
        await held;
      });
      await isLocked;
      await expect(rebuildIndex(db, ctx.sink, annotations, { batchSize: 50 })).rejects.toMatchObject({ code: "E_REBUILD_RUNNING" });
      release();
      await other;
    } finally {
      await Promise.all([db.destroy(), holder.destroy()]);
    }

    // `tether rebuild` through the pooler, its bulk loads slowed, killed while it loads: a session
    // lock would stay on the idle server connection PgBouncer keeps, and refuse every resume.
    await proxy.setMode({ kind: "latency", ms: 300 });
    const env = serviceEnv({ ELASTICSEARCH_URL: proxy.url });
    const rebuild = spawn(process.execPath, ["--conditions=source", "--import", "tsx", "packages/cli/src/main.ts", "rebuild", "annotation", "--batch-size", "10", "--concurrency", "1"], {
      cwd: fileURLToPath(new URL("../..", import.meta.url)),
      env: { ...process.env, ...env, LOG_LEVEL: "warn" },
      stdio: "ignore",
    });
    const gone = new Promise((r) => rebuild.once("exit", r));
    await waitFor(async () => (await countRows(ctx.db, "SELECT coalesce(max(rows_loaded), 0) AS n FROM tether.index_rebuild")) > 0 && (await advisoryLocks()) === 1, {
      what: "the rebuild to be loading, its lock held",
      timeoutMs: 60_000,
      intervalMs: 50,
    });
    rebuild.kill("SIGKILL");
    await gone;
    await waitFor(async () => (await advisoryLocks()) === 0, { what: "the killed rebuild's lock to go with its connection", timeoutMs: 30_000 });
    await proxy.setMode("pass");
    for (const args of [["rebuild", "annotation", "--resume"], ["rebuild", "annotation", "--finish"]]) {
      const r = await runTether(args, serviceEnv());
      expect(r.code, r.stderr).toBe(0);
    }
    expect(await advisoryLocks()).toBe(0);
  });

  it("runs the API and the drainer through it (LISTEN on Postgres itself), and the CLI's capture, drain and verify", async () => {
    const before = await bouncer.stats(database);
    const api = await spawnService("api", serviceEnv({ TETHER_DIRECT_SYNC: "false", TETHER_GRACE_MS: "0" }));
    procs.push(api);
    // The interval is long: only wake-ups, over the direct LISTEN session, drive this drainer.
    const drainer = await spawnService("drainer", serviceEnv({ TETHER_LISTEN_DATABASE_URL: ctx.databaseUrl, TETHER_DRAIN_INTERVAL_MS: "600000", TETHER_MAINTENANCE_INTERVAL_MS: "200" }));
    procs.push(drainer);
    for (let i = 0; i < 30; i++) {
      const r = await fetch(`${api.url}/api/annotations`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(annotationBody(i)) });
      expect(r.status).toBe(201);
    }
    await waitForProgress(() => countRows(ctx.db, "SELECT count(*) AS n FROM tether.job"), (n) => n === 0, { what: "the pooled drainer, woken over LISTEN, to drain" });
    // The maintenance leader wrote queue samples through the pooler.
    await waitFor(async () => (await countRows(ctx.db, "SELECT count(*) AS n FROM tether.queue_sample")) > 0, { what: "a queue sample from the maintenance leader", timeoutMs: 60_000 });
    expect((await drainer.stop()).code).toBe(0);
    expect((await api.stop()).code).toBe(0);

    // Plain SQL through the pooler, captured by the trigger; drained and verified by the CLI through it.
    const cliEnv = serviceEnv();
    const capture = await runTether(["capture", "enable", "annotation", "--grace-ms", "0"], cliEnv);
    expect(capture.code, capture.stderr).toBe(0);
    const app = createDb({ connectionString: pooled, max: 2 });
    try {
      await sql`UPDATE annotation SET text = text || ' (edited by hand)' WHERE id IN (SELECT id FROM annotation ORDER BY id LIMIT 10)`.execute(app);
      await insertRawAnnotations(app, 5, "acct:psql@example.com");
    } finally {
      await app.destroy();
    }
    expect(await countRows(ctx.db, "SELECT count(*) AS n FROM tether.job WHERE tag = 'capture'")).toBe(15);
    const drain = await runTether(["drain", "--until-empty"], cliEnv);
    expect(drain.code, drain.stderr).toBe(0);
    for (const args of [["verify", "--json"], ["verify", "--deep", "--json"]]) {
      const verify = await runTether(args, cliEnv);
      expect(verify.code, verify.stderr).toBe(0);
      expect(JSON.parse(verify.stdout)).toMatchObject({ driftedTotal: 0 });
    }
    expect(auditSummary(await auditAnnotations(ctx.db, ctx.sink))).toEqual({ lost: 0, stale: 0, duplicates: 0, jobs: 0, parked: 0 });
    await runTether(["capture", "disable", "annotation"], cliEnv);
    // All of it went through PgBouncer (its totals are refreshed every second).
    // At least one a write of the API's, plus the drainer's claims and the CLI's verbs.
    await waitFor(async () => (await bouncer.stats(database)).transactions - before.transactions > 30, { what: "PgBouncer to count the transactions it pooled", timeoutMs: 30_000 });
    console.log(`[pgbouncer] ${JSON.stringify(await bouncer.stats(database))} pooled for ${database} (before the API started: ${JSON.stringify(before)})`);
  });

  it("loses nothing when a drainer behind it is SIGKILLed mid-batch: PgBouncer drops the server connection and its claims", async () => {
    const api = await spawnService("api", serviceEnv({ TETHER_DIRECT_SYNC: "false", TETHER_GRACE_MS: "0" }));
    procs.push(api);
    const load = startLiveLoad(api.url, { concurrency: 2, editEvery: 5, deleteEvery: 9 });
    // Slow engine calls keep a batch (its claim transaction) open long enough to be killed inside.
    await proxy.setMode({ kind: "latency", ms: 400 });
    const drainerEnv = serviceEnv({ ELASTICSEARCH_URL: proxy.url, TETHER_LISTEN: "false", TETHER_DRAIN_INTERVAL_MS: "200", TETHER_BATCH_SIZE: "50" });
    const drainer = await spawnService("drainer", drainerEnv);
    procs.push(drainer);
    let held = 0;
    await waitFor(async () => {
      if (proxy.stats.pendingDelayed === 0 || (await openClaims(ctx.db)) === 0) return false;
      const { total, claimable } = await claimability(ctx.db);
      held = total - claimable;
      return held > 0 && proxy.stats.pendingDelayed > 0;
    }, { what: "the pooled drainer to be mid-batch", timeoutMs: 60_000, intervalMs: 20 });
    await drainer.kill();
    // Nothing stays claimed: the killed client's server connection is closed, its transaction rolled back.
    await waitFor(async () => (await openClaims(ctx.db)) === 0, { what: "the killed drainer's claim transaction to end", timeoutMs: 60_000 });
    await waitFor(async () => {
      const c = await claimability(ctx.db);
      return c.claimable === c.total;
    }, { what: "every job to be claimable again", timeoutMs: 60_000 });
    await load.stop();
    expect(held).toBeGreaterThan(0);
    expect(load.calls.filter((c) => c.status === 0 || c.status >= 500)).toEqual([]);

    await proxy.setMode("pass");
    const last = await spawnService("drainer", { ...drainerEnv, TETHER_BATCH_SIZE: "2500" });
    procs.push(last);
    await waitForProgress(() => countRows(ctx.db, "SELECT count(*) AS n FROM tether.job"), (n) => n === 0, { what: "the queue to drain through the pooler" });
    expect(auditSummary(await auditAnnotations(ctx.db, ctx.sink))).toEqual({ lost: 0, stale: 0, duplicates: 0, jobs: 0, parked: 0 });
    expect((await last.stop()).code).toBe(0);
    expect((await api.stop()).code).toBe(0);
  });
});
