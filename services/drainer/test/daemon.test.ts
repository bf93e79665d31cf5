import { once } from "node:events";
import { sql } from "kysely";
import pino from "pino";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createWriter, insertJobs, migrate, pauseName, resumeName, type DrainResult } from "@tether/core/internal";
import { annotationMigrations, annotations } from "@tether/annotations";
import { createTestContext, type TestContext } from "@tether/testkit";
import { startDrainerDaemon, type DrainerDaemon } from "../src/index.js";
import { metricValue } from "./metrics-text.js";

const lane = { name: "sync_annotation", tag: "live", priority: "1" };

describe("the drainer daemon", () => {
  let ctx: TestContext;
  let daemon: DrainerDaemon;
  let base: string;
  // No sink: nothing is direct-synced, so every job is the drainer's to repair.
  const writer = createWriter({ graceMs: 0 });

  const createAnnotations = async (n: number) => {
    for (let i = 0; i < n; i++) await writer.createWithJob(ctx.db, annotations, { userid: "acct:ops", target_uri: "https://example.com/ops", text: `n${i}` });
  };
  const scrape = async () => {
    const res = await fetch(`${base}/metrics`);
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toContain("text/plain");
    return res.text();
  };
  /** Pokes the loop until passes have repaired `n` jobs in total. */
  const drainRepairs = async (n: number) => {
    let repaired = 0;
    const deadline = Date.now() + 30_000;
    while (repaired < n) {
      if (Date.now() > deadline) throw new Error(`only ${repaired}/${n} repaired`);
      const next = once(daemon.drainer, "batch") as Promise<[DrainResult]>;
      daemon.drainer.poke();
      const [r] = await next;
      repaired += r.repaired;
    }
  };

  beforeAll(async () => {
    ctx = await createTestContext();
    await migrate(ctx.db, [annotationMigrations]);
    await ctx.sink.ensureIndex(annotations.index, annotations.mappings);
    daemon = await startDrainerDaemon({
      db: ctx.db,
      sink: ctx.sink,
      collections: [annotations],
      logger: pino({ level: "silent" }),
      port: 0,
      host: "127.0.0.1",
      // Long intervals: the tests drive passes with poke() and maintenance with maintainNow().
      drainer: { intervalMs: 600_000, batchSize: 100 },
      maintenance: { intervalMs: 600_000, sampleIntervalMs: 0 },
      // No scheduled verify: its repairs would race the passes these tests count.
      verify: { fastIntervalMs: 0, deepIntervalMs: 0 },
    });
    base = `http://127.0.0.1:${daemon.port}`;
  });

  afterAll(async () => {
    await daemon?.stop();
    await ctx?.close();
  });

  it("answers /healthz with 200 and the last pass once the loop has run", async () => {
    if (daemon.state.passes === 0) await once(daemon.drainer, "batch");
    const res = await fetch(`${base}/healthz`);
    expect(res.status).toBe(200);
    const body = (await res.json()) as { status: string; running: boolean; passes: number; lastPass: { claimed: number; at: string } };
    expect(body.status).toBe("ok");
    expect(body.running).toBe(true);
    expect(body.passes).toBeGreaterThan(0);
    expect(body.lastPass.claimed).toBe(0);
  });

  it("shows tether_jobs_completed_total growing by lane after a drain", async () => {
    const before = metricValue(await scrape(), "tether_jobs_completed_total", { ...lane, outcome: "repaired" }) ?? 0;
    await createAnnotations(3);
    await drainRepairs(3);
    const text = await scrape();
    expect(metricValue(text, "tether_jobs_completed_total", { ...lane, outcome: "repaired" })).toBe(before + 3);
    expect(metricValue(text, "tether_drain_batch_duration_seconds_count")).toBeGreaterThan(0);
  });

  it("exports the queue gauges of the newest maintenance sample", async () => {
    await pauseName(ctx.db, lane.name, "gauge test");
    await createAnnotations(4);
    const sampled = await daemon.maintainNow();
    expect(sampled.leader).toBe(true);
    let text = await scrape();
    expect(metricValue(text, "tether_queue_length", lane)).toBe(4);
    expect(metricValue(text, "tether_jobs_parked")).toBe(0);
    expect(metricValue(text, "tether_jobs_expired")).toBe(0);
    expect(metricValue(text, "tether_oldest_due_job_age_seconds")).toBeGreaterThanOrEqual(0);

    await resumeName(ctx.db, lane.name);
    await drainRepairs(4);
    await daemon.maintainNow();
    text = await scrape();
    expect(metricValue(text, "tether_queue_length", lane) ?? 0).toBe(0);
  });

  it("exports fan-out work apart: its lanes in tether_queue_length by tag, its own oldest-due gauge, and not in the live one", async () => {
    await pauseName(ctx.db, lane.name, "fan-out gauge test");
    const fanout = { name: lane.name, tag: "fanout:author.update", priority: "10" };
    await insertJobs(ctx.db, [1, 2, 3].map((i) => ({ name: lane.name, entityId: String(900 + i), priority: 10, tag: fanout.tag, delayMs: 0 })));
    // Work that has waited an hour, as a large fan-out's tail may.
    await sql`UPDATE tether.job SET scheduled_at = now() - interval '1 hour', enqueued_at = now() - interval '1 hour' WHERE tag = ${fanout.tag}`.execute(ctx.db);
    await daemon.maintainNow();
    const text = await scrape();
    expect(metricValue(text, "tether_queue_length", fanout)).toBe(3);
    expect(metricValue(text, "tether_fanout_oldest_due_job_age_seconds")).toBeGreaterThanOrEqual(3600);
    expect(metricValue(text, "tether_oldest_due_job_age_seconds")).toBeLessThan(3600);
    await sql`DELETE FROM tether.job WHERE tag = ${fanout.tag}`.execute(ctx.db);
    await resumeName(ctx.db, lane.name);
    await daemon.maintainNow();
    expect(metricValue(await scrape(), "tether_fanout_oldest_due_job_age_seconds")).toBe(0);
  });

  it("answers /alerts with 200 whether or not an alert fires", async () => {
    let res = await fetch(`${base}/alerts`);
    expect(res.status).toBe(200);
    let body = (await res.json()) as { firing: boolean; alerts: { name: string; firing: boolean; value: number }[] };
    expect(body.alerts.map((a) => a.name)).toEqual(["completion_rate_low", "queue_length_high", "expired_jobs", "parked_jobs", "oldest_due_job_too_old", "verify_drift_found", "verify_overdue", "restore_detected"]);
    expect(body.firing).toBe(false);

    // A job no collection handles is parked on its first pass.
    await insertJobs(ctx.db, [{ name: "sync_nobody", entityId: "1", priority: 1, tag: "live", delayMs: 0 }]);
    const next = once(daemon.drainer, "batch") as Promise<[DrainResult]>;
    daemon.drainer.poke();
    const [r] = await next;
    expect(r.parked).toBe(1);

    res = await fetch(`${base}/alerts`);
    expect(res.status).toBe(200);
    body = (await res.json()) as typeof body;
    expect(body.firing).toBe(true);
    expect(body.alerts.find((a) => a.name === "parked_jobs")).toMatchObject({ firing: true, value: 1 });
  });
});
