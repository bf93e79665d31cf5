import { sql, type Kysely } from "kysely";
import { Drainer, insertJobs, type NewJob } from "@tether/core/internal";
import { plainAnnotations } from "../plain-annotations.js";
import { seedAnnotations } from "../annotation-data.js";
import type { Benchmark } from "../benchmark.js";
import { NoopSink } from "../noop-sink.js";
import { compare } from "../report.js";

const CHUNK = 1000;

/** Turns the dead-letter table's event trigger off or on (the drainer's writes are its own option). */
async function setTriggers(db: Kysely<any>, on: boolean): Promise<void> {
  const verb = on ? sql`ENABLE` : sql`DISABLE`;
  await sql`ALTER TABLE tether.dead_job ${verb} TRIGGER dead_job_event`.execute(db);
}

export const entityEvents: Benchmark = {
  name: "events",
  title: "Entity event log (the console's trace history): enqueue and drain of live jobs with it vs without it",
  async run(scope) {
    const n = scope.sizes.queueJobs;
    const d = await scope.database();
    await seedAnnotations(d.db, n);
    const ids = await sql<{ id: string }>`SELECT id::text AS id FROM annotation ORDER BY id`.execute(d.db);
    const jobs: NewJob[] = ids.rows.map((r) => ({ name: plainAnnotations.jobName, entityId: r.id, priority: 1, tag: "live", delayMs: 0 }));
    const enqueueOn: number[] = [];
    const enqueueOff: number[] = [];
    const drainOn: number[] = [];
    const drainOff: number[] = [];
    const fanoutOn: number[] = [];
    const fanoutOff: number[] = [];
    const once = async (on: boolean) => {
      await sql`TRUNCATE tether.job, tether.entity_event, tether.entity_event_batch, tether.job_stat`.execute(d.db);
      await sql`CHECKPOINT`.execute(d.db);
      await setTriggers(d.db, on);
      // Live jobs, as the write path inserts them: the case that records every event.
      let t = performance.now();
      for (let i = 0; i < n; i += CHUNK) await insertJobs(d.db, jobs.slice(i, i + CHUNK));
      (on ? enqueueOn : enqueueOff).push(n / ((performance.now() - t) / 1000));
      const drainer = new Drainer({ db: d.db, sink: new NoopSink(1), collections: [plainAnnotations], concurrency: 2, entityEvents: on });
      t = performance.now();
      const dr = await drainer.drainUntilEmpty();
      (on ? drainOn : drainOff).push(n / ((performance.now() - t) / 1000));
      if (dr.up_to_date !== n) throw new Error(`drained ${dr.up_to_date}/${n}`);
      // Each confirmed job is one position in its pass's batch row (its enqueue and its outcome).
      const events = await sql<{ n: string | null }>`SELECT sum(cardinality(job_ids)) AS n FROM tether.entity_event_batch`.execute(d.db);
      if (Number(events.rows[0]!.n ?? 0) !== (on ? n : 0)) throw new Error(`expected ${on ? n : 0} jobs in the trace, found ${events.rows[0]!.n}`);
    };
    // Sync jobs as a fan-out's expansion enqueues them (tag fanout:…, kwargs.via naming the changed row
    // and the fan-out job): the trace history keeps where each came from.
    const fanoutOnce = async (on: boolean) => {
      await sql`TRUNCATE tether.job, tether.entity_event, tether.entity_event_batch, tether.job_stat`.execute(d.db);
      await sql`CHECKPOINT`.execute(d.db);
      await sql`
        INSERT INTO tether.job (name, priority, tag, kwargs)
        SELECT ${plainAnnotations.jobName}, 10, 'fanout:author.update',
               jsonb_build_object('id', id::text, 'via', jsonb_build_object('table', 'app_user', 'column', 'id', 'value', 'acct:user' || (id % 1000), 'fanout', (id % 1000)::text))
        FROM annotation`.execute(d.db);
      const drainer = new Drainer({ db: d.db, sink: new NoopSink(1), collections: [plainAnnotations], concurrency: 2, entityEvents: on });
      const t = performance.now();
      const dr = await drainer.drainUntilEmpty();
      (on ? fanoutOn : fanoutOff).push(n / ((performance.now() - t) / 1000));
      if (dr.up_to_date !== n) throw new Error(`drained ${dr.up_to_date}/${n}`);
    };
    for (let rep = 0; rep < scope.sizes.reps; rep++) {
      // Alternate which goes first, so a warmer cache does not always favour the same side.
      for (const on of rep % 2 === 0 ? [true, false] : [false, true]) await once(on);
      for (const on of rep % 2 === 0 ? [false, true] : [true, false]) await fanoutOnce(on);
      scope.log(
        `rep ${rep + 1}: enqueue ${enqueueOn.at(-1)!.toFixed(0)} vs ${enqueueOff.at(-1)!.toFixed(0)} jobs/s, drain ${drainOn.at(-1)!.toFixed(0)} vs ${drainOff.at(-1)!.toFixed(0)} jobs/s, ` +
          `fan-out drain ${fanoutOn.at(-1)!.toFixed(0)} vs ${fanoutOff.at(-1)!.toFixed(0)} jobs/s`,
      );
    }
    await setTriggers(d.db, true);
    const note =
      "with: a pending job is its own 'enqueued' event (no trigger on tether.job); the drainer's confirming DELETE also writes one tether.entity_event_batch row per pass and lane holding the confirmed jobs in arrays (GIN on the entity ids); " +
      "without: Drainer({ entityEvents: false }). Before migration 000007 the log was a trigger writing one row per enqueued job plus one row per confirmed job";
    return {
      rows: [
        compare({ bench: "9 events", metric: `insertJobs (live) in ${CHUNK}s, N=${n}`, unit: "jobs/s", better: "higher", tether: enqueueOn, baselineName: "same, no event log", baseline: enqueueOff, note }),
        compare({ bench: "9 events", metric: `drainUntilEmpty, no-op sink, N=${n}`, unit: "jobs/s", better: "higher", tether: drainOn, baselineName: "same, no event log", baseline: drainOff, note }),
        compare({
          bench: "9 events",
          metric: `drainUntilEmpty of a fan-out's sync jobs (kwargs.via), no-op sink, N=${n}`,
          unit: "jobs/s",
          better: "higher",
          tether: fanoutOn,
          baselineName: "same, no event log",
          baseline: fanoutOff,
          note: "each job as a fan-out's expansion enqueues it: tag fanout:<embed>.<op>, kwargs.via naming the changed row and the fan-out job",
        }),
      ],
      info: { jobs: n },
    };
  },
};
