import { subscribe } from "node:diagnostics_channel";
import { sql } from "kysely";
import { Drainer, insertJobs } from "@tether/core/internal";
const DRAIN_STAGE_CHANNEL = "tether:drain-stage";
import { createDb, migrate } from "@tether/core";
import { annotations, annotationMigrations } from "@tether/annotations";
import { createScratchDatabase } from "@tether/testkit";
import { seedAnnotations } from "./annotation-data.js";
import { NoopSink } from "./noop-sink.js";

const n = Number(process.argv[2] ?? 20000);
const events = process.argv[3] !== "off";
const scratch = await createScratchDatabase(process.env.DATABASE_URL!, `tether_probe_${process.pid}`);
const db = createDb({ connectionString: scratch.url, max: 10 });
try {
  await migrate(db, [annotationMigrations]);
  await seedAnnotations(db, n);
  const stages: Record<string, number> = {};
  subscribe(DRAIN_STAGE_CHANNEL, (m: any) => { stages[m.stage] = (stages[m.stage] ?? 0) + m.ms; });
  for (let rep = 0; rep < 4; rep++) {
    for (const k of Object.keys(stages)) delete stages[k];
    const jobs = Array.from({ length: n }, (_, i) => ({ name: annotations.jobName, entityId: String(i + 1), priority: 1, tag: "live", delayMs: 0 }));
    const t0 = performance.now();
    for (let i = 0; i < n; i += 5000) await insertJobs(db, jobs.slice(i, i + 5000));
    const enq = performance.now() - t0;
    await sql`ANALYZE tether.job`.execute(db);
    const d = new Drainer({ db, sink: new NoopSink(1), collections: [annotations], concurrency: 2, entityEvents: events });
    const cpu0 = process.cpuUsage();
    const t1 = performance.now();
    const r = await d.drainUntilEmpty();
    const ms = performance.now() - t1;
    const cpu = process.cpuUsage(cpu0);
    console.log(`rep ${rep}: enqueue ${(n / enq * 1000).toFixed(0)}/s drain ${(n / ms * 1000).toFixed(0)}/s (${ms.toFixed(0)} ms, node cpu ${((cpu.user + cpu.system) / 1000).toFixed(0)} ms) up_to_date ${r.up_to_date}`, JSON.stringify(Object.fromEntries(Object.entries(stages).map(([k, v]) => [k, Math.round(v)]))));
    await sql`VACUUM ANALYZE tether.job`.execute(db);
  }
} finally {
  await db.destroy();
  await scratch.drop();
}
