import { sql, type Kysely } from "kysely";
import { insertJobs, type NewJob } from "@tether/core/internal";
import { plainAnnotations } from "../plain-annotations.js";
import { seedAnnotations } from "../annotation-data.js";
import { waitFor, type Benchmark } from "../benchmark.js";
import { drainVsBulk, idleDrainer, timeSplit } from "../drain-vs-bulk.js";
import type { DrainChildResult } from "../drain-child-process.js";
import { compare } from "../report.js";
import { baseDrain, measuresScale, scaleRows } from "../scale-check.js";

const CHUNK = 10_000;

interface TableStats {
  n_live_tup: number;
  n_dead_tup: number;
  n_tup_del: number;
  bytes: number;
}

async function jobTableStats(db: Kysely<any>): Promise<TableStats> {
  const r = await sql<Record<keyof TableStats, string>>`
    SELECT n_live_tup, n_dead_tup, n_tup_del, pg_total_relation_size('tether.job') AS bytes
    FROM pg_stat_user_tables WHERE schemaname = 'tether' AND relname = 'job'`.execute(db);
  const row = r.rows[0]!;
  return { n_live_tup: Number(row.n_live_tup), n_dead_tup: Number(row.n_dead_tup), n_tup_del: Number(row.n_tup_del), bytes: Number(row.bytes) };
}

/** The jobs createWithJob wrote while Elasticsearch was down (live tag, grace period over). */
async function enqueueOutageJobs(db: Kysely<any>, n: number): Promise<void> {
  for (let from = 1; from <= n; from += CHUNK) {
    const jobs: NewJob[] = [];
    for (let id = from; id < Math.min(n + 1, from + CHUNK); id++) jobs.push({ name: plainAnnotations.jobName, entityId: String(id), priority: 1, tag: "live", delayMs: 0 });
    await insertJobs(db, jobs);
  }
}

export const backlogRecovery: Benchmark = {
  name: "backlog",
  title: "Backlog recovery after an Elasticsearch outage: drain to empty with the real sink",
  sinks: ["elasticsearch", "opensearch"],
  async run(scope) {
    const n = scope.sizes.backlogJobs;
    const d = await scope.database();
    const sink = scope.engineSink();
    await seedAnnotations(d.db, n);
    const drain: number[] = [];
    const bulk: number[] = [];
    const seconds: number[] = [];
    const peakMb: number[] = [];
    const dead: number[] = [];
    const sizeAfter: number[] = [];
    const sizeAtPeak: number[] = [];
    const children: DrainChildResult[] = [];
    // --full: a 100k drain first, the reference of the 1M one's memory and time.
    const base = measuresScale(n) ? await baseDrain(scope, d, sink, enqueueOutageJobs) : undefined;
    for (let rep = 0; rep < scope.sizes.reps; rep++) {
      // Each repetition starts from a fresh table, as after a deploy: the outage's jobs arrive,
      // the documents are missing, then Elasticsearch is back and one drainer catches up.
      await sql`TRUNCATE tether.job`.execute(d.db);
      await enqueueOutageJobs(d.db, n);
      const before = await jobTableStats(d.db);
      const r = await drainVsBulk(scope, d, sink, n, rep % 2 === 1);
      // The drainer's sessions report their counters when they end; wait until they are visible.
      let after = await jobTableStats(d.db);
      await waitFor(async () => (after = await jobTableStats(d.db)).n_tup_del - before.n_tup_del >= n, "tether.job statistics", 10_000, 100).catch(() => undefined);
      children.push(r.drain);
      drain.push(r.drainRate);
      bulk.push(r.bulkRate);
      seconds.push(r.drain.durationMs / 1000);
      peakMb.push(r.drain.peakHwmKb / 1024);
      dead.push(after.n_dead_tup);
      sizeAfter.push(after.bytes / 2 ** 20);
      sizeAtPeak.push(before.bytes / 2 ** 20);
      scope.log(
        `rep ${rep + 1}: drained ${n} in ${(r.drain.durationMs / 1000).toFixed(1)} s (${r.drainRate.toFixed(0)}/s), helpers.bulk ${r.bulkRate.toFixed(0)}/s, ` +
          `VmHWM ${(r.drain.peakHwmKb / 1024).toFixed(0)} MB, dead tuples ${after.n_dead_tup}, tether.job ${(after.bytes / 2 ** 20).toFixed(1)} MB`,
      );
    }
    const idle = await idleDrainer(scope, d);
    const autovacuum = (await sql<{ setting: string }>`SELECT setting FROM pg_settings WHERE name = 'autovacuum'`.execute(d.db)).rows[0]?.setting;
    const bulkSeconds = bulk.map((b) => n / b);
    return {
      rows: [
        compare({
          bench: "7 backlog",
          metric: `time to drain ${n} outage jobs`,
          unit: "s",
          better: "lower",
          tether: seconds,
          baselineName: "helpers.bulk, same docs",
          baseline: bulkSeconds,
          note: `live jobs (priority 1, grace over) for rows whose documents are missing; Drainer.drainUntilEmpty with the real sink in a child process; helpers.bulk streams the same rows from Postgres; ${timeSplit(children)}`,
        }),
        compare({ bench: "7 backlog", metric: "drain rate", unit: "docs/s", better: "higher", tether: drain, baselineName: "helpers.bulk, same docs", baseline: bulk }),
        compare({
          bench: "7 backlog",
          metric: "drainer peak RSS (VmHWM)",
          unit: "MB",
          better: "lower",
          tether: peakMb,
          baselineName: "same process, idle",
          baseline: peakMb.map(() => idle.peakHwmKb / 1024),
        }),
        compare({
          bench: "7 backlog",
          metric: "tether.job dead tuples after the drain",
          unit: "tuples",
          better: "lower",
          tether: dead,
          baselineName: "jobs drained",
          baseline: dead.map(() => n),
          note: `pg_stat_user_tables.n_dead_tup once the drainer's sessions ended; autovacuum = ${autovacuum} on this server, so nothing reclaims them during the run`,
        }),
        compare({
          bench: "7 backlog",
          metric: "tether.job size after the drain",
          unit: "MB",
          better: "lower",
          tether: sizeAfter,
          baselineName: "size at peak backlog",
          baseline: sizeAtPeak,
          note: "pg_total_relation_size('tether.job') (heap + indexes) when empty again vs when it held the backlog",
        }),
        ...(base ? scaleRows("7 backlog", n, children, base) : []),
      ],
      info: { jobs: n, autovacuum, drains: children, ...(base ? { scaleBase: base } : {}) },
    };
  },
};
