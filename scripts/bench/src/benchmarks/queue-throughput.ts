import { sql, type Kysely } from "kysely";
import { Drainer, insertJobs, type NewJob } from "@tether/core/internal";
import { plainAnnotations } from "../plain-annotations.js";
import { seedAnnotations } from "../annotation-data.js";
import type { Benchmark } from "../benchmark.js";
import { NoopSink } from "../noop-sink.js";
import { GRAPHILE_CONFIG, GRAPHILE_LOCAL_QUEUES, graphileInstall, graphileRound } from "../peers/graphile-peer.js";
import { PGBOSS_CONFIG, pgBossRound, pgBossStart } from "../peers/pg-boss-peer.js";
import { RAW_CONFIG, rawInstall, rawRound } from "../peers/raw-sql-loop.js";
import { compare } from "../report.js";
import { quantile } from "../stats.js";

const CHUNK = 5000;
const TETHER_CONFIG =
  `tether: core insertJobs() in batches of ${CHUNK}; one Drainer (batchSize 2500, pool 10) drainUntilEmpty() ` +
  `with a no-op sink whose fetchStates reports every entity current (each job still has its row's version read from Postgres and compared, and is confirmed by DELETE); ANALYZE after every enqueue for all three (autovacuum may be off)`;

async function tetherRound(db: Kysely<any>, n: number): Promise<{ enqueueMs: number; drainMs: number }> {
  const jobs: NewJob[] = Array.from({ length: n }, (_, i) => ({ name: plainAnnotations.jobName, entityId: String(i + 1), priority: 1, tag: "live", delayMs: 0 }));
  const t0 = performance.now();
  for (let i = 0; i < n; i += CHUNK) await insertJobs(db, jobs.slice(i, i + CHUNK));
  const enqueueMs = performance.now() - t0;
  await sql`ANALYZE tether.job`.execute(db);
  const drainer = new Drainer({ db, sink: new NoopSink(1), collections: [plainAnnotations], concurrency: 2 });
  const t1 = performance.now();
  const r = await drainer.drainUntilEmpty();
  const drainMs = performance.now() - t1;
  if (r.error || r.up_to_date !== n) throw new Error(`tether drained ${r.up_to_date}/${n}: ${r.error ?? JSON.stringify(r)}`);
  await sql`VACUUM ANALYZE tether.job`.execute(db);
  return { enqueueMs, drainMs };
}

const medianOf = (xs: readonly number[]) => quantile([...xs].sort((a, b) => a - b), 0.5);

export const queueThroughput: Benchmark = {
  name: "queue",
  title: "Queue throughput with a no-op sink vs graphile-worker and pg-boss",
  async run(scope) {
    const n = scope.sizes.queueJobs;
    const tether = await scope.database("tether");
    await seedAnnotations(tether.db, n);
    await rawInstall(tether.url);
    const graphile = await scope.rawDatabase("graphile", 1);
    await graphileInstall(graphile.url);
    const bossDb = await scope.rawDatabase("pgboss", 1);
    const boss = await pgBossStart(bossDb.url);
    scope.defer(() => boss.stop({ graceful: false }));

    // One unrecorded round each (a tenth of the size) warms connections, JIT and caches.
    const warm = Math.max(500, Math.round(n / 10));
    await tetherRound(tether.db, warm);
    await rawRound(tether.url, warm, plainAnnotations.jobName);
    await graphileRound(graphile.url, warm);
    await pgBossRound(boss, bossDb.url, warm, 99);

    const [smallQueue, largeQueue] = GRAPHILE_LOCAL_QUEUES;
    const s = { tether: [] as number[][], raw: [] as number[][], graphile: [] as number[][], graphileLarge: [] as number[][], boss: [] as number[][] };
    for (let rep = 0; rep < scope.sizes.reps; rep++) {
      const t = await tetherRound(tether.db, n);
      const r = await rawRound(tether.url, n, plainAnnotations.jobName);
      const g = await graphileRound(graphile.url, n, { localQueue: smallQueue });
      const gl = await graphileRound(graphile.url, n, { localQueue: largeQueue });
      const b = await pgBossRound(boss, bossDb.url, n, rep);
      s.tether.push([t.enqueueMs, t.drainMs]);
      s.raw.push([r.enqueueMs, r.drainMs]);
      s.graphile.push([g.enqueueMs, g.drainMs]);
      s.graphileLarge.push([gl.enqueueMs, gl.drainMs]);
      s.boss.push([b.enqueueMs, b.drainMs]);
      scope.log(
        `rep ${rep + 1}: drain ms tether ${t.drainMs.toFixed(0)}, raw SQL loop ${r.drainMs.toFixed(0)}, graphile-worker (local queue ${smallQueue}) ${g.drainMs.toFixed(0)}, ` +
          `graphile-worker (local queue ${largeQueue}) ${gl.drainMs.toFixed(0)}, pg-boss ${b.drainMs.toFixed(0)}`,
      );
    }
    const rate = (xs: number[][], k: 0 | 1) => xs.map((x) => n / (x[k]! / 1000));
    const peers = [
      [`graphile-worker 0.18, local queue ${smallQueue}`, s.graphile, GRAPHILE_CONFIG],
      [`graphile-worker 0.18, local queue ${largeQueue}`, s.graphileLarge, GRAPHILE_CONFIG],
      ["pg-boss 12", s.boss, PGBOSS_CONFIG],
    ] as const;
    // The best peer of each repetition (the fastest drain among them), paired with tether's.
    const best = s.tether.map((_, rep) => Math.max(...peers.map(([, samples]) => n / (samples[rep]![1]! / 1000))));
    const bestName = peers.reduce((a, p) => (medianOf(rate(p[1], 1)) > medianOf(rate(a[1], 1)) ? p : a))[0];
    const rows = [
      compare({
        bench: "1 queue",
        metric: `no-op drain vs best peer, N=${n}`,
        unit: "jobs/s",
        better: "higher",
        tether: rate(s.tether, 1),
        baselineName: "best tuned peer per rep",
        baseline: best,
        note: `best by median: ${bestName}`,
        goal: { op: ">=", value: 1.5 },
      }),
      compare({
        bench: "1 queue",
        metric: `no-op drain vs the physical limit, N=${n}`,
        unit: "jobs/s",
        better: "higher",
        tether: rate(s.tether, 1),
        baselineName: "raw SQL loop (DELETE … SKIP LOCKED LIMIT 2500)",
        baseline: rate(s.raw, 1),
        note: RAW_CONFIG,
        goal: { op: ">=", value: 0.8 },
      }),
    ];
    // Every peer as a fraction of the same limit: where each queue stands, not only against tether.
    for (const [peer, samples] of peers) {
      rows.push(
        compare({ bench: "1 queue", metric: `${peer}: drain vs the physical limit, N=${n}`, unit: "jobs/s", better: "higher", tether: rate(samples, 1), baselineName: "raw SQL loop", baseline: rate(s.raw, 1), note: "the peer in the tether column" }),
      );
    }
    rows.push(compare({ bench: "1 queue", metric: `enqueue vs the raw INSERT … SELECT, N=${n}`, unit: "jobs/s", better: "higher", tether: rate(s.tether, 0), baselineName: "raw SQL loop", baseline: rate(s.raw, 0) }));
    const peerRowsFrom = rows.length;
    for (const [peer, samples, config] of peers) {
      rows.push(
        compare({ bench: "1 queue", metric: `drain to empty, N=${n}`, unit: "jobs/s", better: "higher", tether: rate(s.tether, 1), baselineName: peer, baseline: rate(samples, 1), note: config }),
        compare({ bench: "1 queue", metric: `enqueue (batches of ${CHUNK}), N=${n}`, unit: "jobs/s", better: "higher", tether: rate(s.tether, 0), baselineName: peer, baseline: rate(samples, 0) }),
      );
    }
    rows[peerRowsFrom]!.note = `${TETHER_CONFIG}. vs ${rows[peerRowsFrom]!.note ?? ""}`;
    return { rows, info: { jobs: n, configs: { tether: TETHER_CONFIG, raw: RAW_CONFIG, graphile: GRAPHILE_CONFIG, pgBoss: PGBOSS_CONFIG }, samplesMs: s } };
  },
};
