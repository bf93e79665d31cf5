import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createDb, createWriter, Drainer, evaluateAlerts, migrate, type DrainResult } from "@tether/core";
import { annotationMigrations } from "@tether/annotations";
import { createTestContext, startPrivatePostgres, type PrivatePostgres, type TestContext } from "@tether/testkit";
import type { Kysely } from "kysely";
import { annotations } from "./support/annotation-context.js";
import { auditAnnotations, auditSummary } from "@tether/testkit";
import { drainToEmpty } from "./support/drain.js";

/**
 * Postgres itself restarts — once cleanly, once as a crash — while the drainer is inside a
 * batch and writes keep coming. The server is the test's own (the machine's PostgreSQL
 * binaries, a temporary data directory), so restarting it disturbs nobody else.
 */
describe("Postgres restarted in the middle of a drain", () => {
  let server: PrivatePostgres;
  let ctx: TestContext;
  let db: Kysely<any>;

  beforeAll(async () => {
    server = await startPrivatePostgres();
    ctx = await createTestContext();
    db = createDb({ connectionString: server.url, max: 8, applicationName: "tether-restart-test" });
    await migrate(db, [annotationMigrations]);
    await ctx.sink.ensureIndex(annotations.index, annotations.mappings);
  });
  afterAll(async () => {
    await db?.destroy();
    await server?.close();
    await ctx?.close();
  });

  it("ends with nothing missing, stale or resurrected, and no alert firing", async () => {
    // No direct sync: every write is the drainer's to confirm.
    const writer = createWriter({ graceMs: 0 });
    const drainer = new Drainer({ db, sink: ctx.sink, collections: [annotations], intervalMs: 100, batchSize: 20, backoff: { baseMs: 100, maxMs: 1_000 } });
    const failedPasses: string[] = [];
    drainer.on("batch", (r: DrainResult) => void (r.error && failedPasses.push(r.error)));
    let writing = true;
    const written = { ok: 0, failed: 0 };
    const writes = (async () => {
      for (let i = 0; writing; i++) {
        try {
          const { row } = await writer.createWithJob(db, annotations, { userid: `acct:r${i % 3}`, target_uri: `https://example.com/r/${i}`, text: `r ${i}` });
          const id = String((row as { id: string }).id);
          if (i % 4 === 3) await writer.updateWithJob(db, annotations, id, { text: `edited ${i}` });
          if (i % 7 === 6) await writer.deleteWithJob(db, annotations, id);
          written.ok += 1;
        } catch {
          written.failed += 1; // the server is down: the caller sees the error, nothing half-done.
          await new Promise((r) => setTimeout(r, 50));
        }
      }
    })();
    // events.once would reject on the "error" a failed pass emits while Postgres restarts.
    const next = (event: "claimed" | "batch") => new Promise<void>((resolve) => drainer.once(event, () => resolve()));
    drainer.start();
    try {
      for (const mode of ["fast", "immediate"] as const) {
        // Restart while a batch holds its claims (its transaction is open).
        await next("claimed");
        await server.restart(mode);
        const before = written.ok;
        while (written.ok < before + 20) await next("batch");
      }
    } finally {
      writing = false;
      await writes;
      await drainer.stop();
    }
    expect(failedPasses.length).toBeGreaterThan(0);
    await drainToEmpty(new Drainer({ db, sink: ctx.sink, collections: [annotations] }), db);
    const audit = await auditAnnotations(db, ctx.sink);
    expect(audit.rows).toBeGreaterThan(40);
    expect(auditSummary(audit)).toEqual({ lost: 0, stale: 0, duplicates: 0, jobs: 0, parked: 0 });
    const alerts = await evaluateAlerts(db);
    expect(alerts.alerts.filter((a) => a.firing)).toEqual([]);
  });
});
