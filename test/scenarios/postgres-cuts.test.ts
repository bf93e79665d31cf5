import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { sql } from "kysely";
import { createDb, Drainer } from "@tether/core";
import { startFaultProxy, startTcpProxy, type FaultProxy, type TcpProxy, type TestContext } from "@tether/testkit";
import { annotations, countRows, createAnnotationContext } from "./support/annotation-context.js";
import { auditAnnotations, auditSummary } from "@tether/testkit";
import { call, runConcurrent, scaled, type Call } from "@tether/testkit";
import { openClaims } from "./support/locks.js";
import { spawnService, stopAll, type ServiceProcess } from "./support/processes.js";
import { waitFor } from "@tether/testkit";

/**
 * Every Postgres connection of the API and the drainer is cut, over and over, while users
 * write and the drainer drains; for a moment new connections are refused too. The API must
 * answer honestly (201 only for what committed, 5xx otherwise), and the drainer must recover
 * by itself.
 */
describe("Postgres connections cut mid-write and mid-drain", () => {
  const N = scaled(400, 50);
  let ctx: TestContext;
  let pgProxy: TcpProxy;
  let apiEs: FaultProxy;
  let drainerEs: FaultProxy;
  let api: ServiceProcess | undefined;
  let drainer: ServiceProcess | undefined;

  beforeAll(async () => {
    ctx = await createAnnotationContext();
    const u = new URL(ctx.databaseUrl);
    pgProxy = await startTcpProxy({ host: u.hostname, port: Number(u.port || 5432) });
    apiEs = await startFaultProxy({ target: ctx.elasticsearchUrl });
    drainerEs = await startFaultProxy({ target: ctx.elasticsearchUrl });
  });
  afterAll(async () => {
    await stopAll([api, drainer]);
    await pgProxy.close();
    await apiEs.close();
    await drainerEs.close();
    await ctx.close();
  });

  it("answers 201 only for committed writes, loses nothing committed, and the drainer recovers by itself", async () => {
    const common = { DATABASE_URL: pgProxy.rewriteUrl(ctx.databaseUrl), TETHER_INDEX_PREFIX: ctx.indexPrefix };
    [api, drainer] = await Promise.all([
      spawnService("api", { ...common, ELASTICSEARCH_URL: apiEs.url, TETHER_GRACE_MS: "0" }),
      spawnService("drainer", { ...common, ELASTICSEARCH_URL: drainerEs.url, TETHER_DRAIN_INTERVAL_MS: "200", TETHER_BATCH_SIZE: "40" }),
    ]);
    // All indexing is the drainer's, and its batches stay open long enough to be cut inside.
    await apiEs.setMode("refuse");
    await drainerEs.setMode({ kind: "latency", ms: 150 });

    let chaos = true;
    let cuts = 0;
    let cutsMidDrain = 0;
    const chaosLoop = (async () => {
      for (let round = 0; chaos; round++) {
        await new Promise((r) => setTimeout(r, 150 + Math.random() * 250));
        if (!chaos) break;
        // Every other round aims at an open drain transaction (waiting up to a second for one).
        const deadline = Date.now() + (round % 2 === 1 ? 1_000 : 0);
        let midDrain = (await openClaims(ctx.db)) > 0;
        while (!midDrain && Date.now() < deadline) {
          await new Promise((r) => setTimeout(r, 20));
          midDrain = (await openClaims(ctx.db)) > 0;
        }
        if (midDrain) cutsMidDrain += 1;
        cuts += pgProxy.cutAll();
        if (round % 5 === 4) {
          await pgProxy.refuse(true);
          await new Promise((r) => setTimeout(r, 200));
          await pgProxy.refuse(false);
        }
      }
    })();
    const writes: Call[] = await runConcurrent(N, 8, (i) => call("POST", `${api!.url}/api/annotations`, { user: "acct:cut@example.com", uri: "https://example.com/cut", text: `cut-${i}` }));
    chaos = false;
    await chaosLoop;

    const committed = new Map(
      (await sql<{ id: string; text: string }>`SELECT id::text AS id, text FROM annotation`.execute(ctx.db)).rows.map((r) => [r.text, r.id]),
    );
    const ok = writes.filter((w) => w.status === 201);
    const failed = writes.map((w, i) => ({ w, i })).filter(({ w }) => w.status !== 201);
    const ambiguous = failed.filter(({ i }) => committed.has(`cut-${i}`)).length;
    console.log(
      `[pg cuts] ${N} writes: ${ok.length} × 201, ${failed.length} × ${[...new Set(failed.map(({ w }) => w.status))].join("/")} (of which ${ambiguous} had committed before the cut hid it); ${cuts} connections cut, ${cutsMidDrain} rounds while a drain transaction was open`,
    );
    // Honest answers: a 201 means the row is there, at the id it said; anything else is a 5xx.
    for (const [i, w] of writes.entries()) if (w.status === 201) expect(committed.get(`cut-${i}`)).toBe(String(w.body?.id));
    expect(failed.every(({ w }) => w.status >= 500 && w.status <= 599)).toBe(true);
    expect(ok.length).toBeGreaterThan(0);
    expect(failed.length).toBeGreaterThan(0);
    expect(cutsMidDrain).toBeGreaterThan(0);
    expect(api.child.exitCode).toBeNull();

    // Every committed row has its job (atomic capture), and the same drainer process, never
    // restarted, drains them all once Postgres stays up.
    await drainerEs.setMode("pass");
    await waitFor(async () => (await countRows(ctx.db, "SELECT count(*) AS n FROM tether.job")) === 0, { what: "the drainer to recover and drain", timeoutMs: 60_000, intervalMs: 250 });
    expect(drainer.child.exitCode).toBeNull();
    const audit = await auditAnnotations(ctx.db, ctx.sink);
    expect(audit.rows).toBe(committed.size);
    expect(auditSummary(audit)).toEqual({ lost: 0, stale: 0, duplicates: 0, jobs: 0, parked: 0 });
  });

  it("a connection cut inside a transaction fails that transaction instead of killing the process", async () => {
    const db = createDb({ connectionString: pgProxy.rewriteUrl(ctx.databaseUrl), max: 2 });
    try {
      const tx = db.transaction().execute(async (trx) => {
        await sql`SELECT 1`.execute(trx);
        pgProxy.cutAll();
        // The reset arrives while the client is checked out and idle in the transaction.
        await new Promise((r) => setTimeout(r, 100));
        await sql`SELECT 2`.execute(trx);
      });
      await expect(tx).rejects.toThrow();
      expect((await sql<{ ok: number }>`SELECT 3 AS ok`.execute(db)).rows[0]!.ok).toBe(3);
    } finally {
      await db.destroy();
    }
  });

  it("a drainer loop whose passes fail keeps running when nobody listens for its errors", async () => {
    await pgProxy.refuse(true);
    const db = createDb({ connectionString: pgProxy.rewriteUrl(ctx.databaseUrl), max: 2 });
    const drainer = new Drainer({ db, sink: ctx.sink, collections: [annotations], intervalMs: 50 });
    try {
      const failures: string[] = [];
      drainer.on("batch", (r) => r.error && failures.push(r.error));
      drainer.start();
      await waitFor(() => failures.length >= 2, { what: "two failed passes" });
      await pgProxy.refuse(false);
      await waitFor(() => failures.length >= 2 && drainer.running, { what: "the loop to still run" });
    } finally {
      await drainer.stop();
      await pgProxy.refuse(false);
      await db.destroy();
    }
  });
});
