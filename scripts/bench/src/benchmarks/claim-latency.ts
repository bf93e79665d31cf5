import { sql, type Kysely } from "kysely";
import { claimBatch, claimJobs } from "@tether/core/internal";
import { plainAnnotations } from "../plain-annotations.js";
import type { Benchmark } from "../benchmark.js";
import { compare, gateOnControl, type ResultRow } from "../report.js";

const LIMIT = 2500;
const MAX_ATTEMPTS = 5;

class Rollback extends Error {}

/** Runs `fn` in a transaction that always rolls back (so the same rows stay claimable); returns its duration. */
async function inRolledBack(db: Kysely<any>, fn: (trx: Kysely<any>) => Promise<number>): Promise<number> {
  let ms = 0;
  try {
    await db.transaction().execute(async (trx) => {
      const t = performance.now();
      const n = await fn(trx);
      ms = performance.now() - t;
      if (n !== LIMIT) throw new Error(`claimed ${n} rows, expected ${LIMIT}`);
      throw new Rollback();
    });
  } catch (err) {
    if (!(err instanceof Rollback)) throw err;
  }
  return ms;
}

const tetherClaim = (trx: Kysely<any>) => claimJobs(trx, { limit: LIMIT }).then((r) => r.length);

/** The naive queue: one (priority, enqueued_at) index; parked jobs stay in the table with attempts exhausted. */
const plainClaim = (trx: Kysely<any>) =>
  sql`SELECT id, name, priority, tag, kwargs, attempts, enqueued_at, scheduled_at FROM bench_plain_job
      WHERE scheduled_at <= now() AND expires_at > now() AND attempts < ${MAX_ATTEMPTS}
      ORDER BY priority, enqueued_at LIMIT ${LIMIT} FOR UPDATE SKIP LOCKED`
    .execute(trx)
    .then((r) => r.rows.length);

/** Inserts `n` jobs into `table` (tether.job or the plain copy) with the given timing columns. */
async function addJobs(db: Kysely<any>, table: "tether.job" | "bench_plain_job", n: number, kind: "due" | "expired" | "future" | "parked"): Promise<void> {
  const t = {
    due: { enq: "1 minute", sched: "-1 minute", exp: "30 days", attempts: 0 },
    expired: { enq: "40 days", sched: "-40 days", exp: "-10 days", attempts: 0 },
    future: { enq: "1 hour", sched: "1 day", exp: "30 days", attempts: 0 },
    parked: { enq: "2 hours", sched: "-2 hours", exp: "30 days", attempts: MAX_ATTEMPTS },
  }[kind];
  const idCol = table === "bench_plain_job" ? sql`id,` : sql``;
  const idVal = table === "bench_plain_job" ? sql`nextval('bench_plain_job_seq'),` : sql``;
  await sql`
    INSERT INTO ${sql.table(table)} (${idCol} name, enqueued_at, scheduled_at, expires_at, priority, tag, kwargs, attempts)
    SELECT ${idVal} ${plainAnnotations.jobName}, now() - ${t.enq}::interval, now() + ${t.sched}::interval, now() + ${t.exp}::interval,
           1, 'live', jsonb_build_object('id', g::text), ${t.attempts}
    FROM generate_series(1, ${n}::int) AS g`.execute(db);
}

async function addParkedDead(db: Kysely<any>, n: number): Promise<void> {
  await sql`
    INSERT INTO tether.dead_job (job_id, name, enqueued_at, scheduled_at, expires_at, priority, tag, kwargs, attempts, last_error, reason)
    SELECT g, ${plainAnnotations.jobName}, now() - interval '2 hours', now() - interval '2 hours', now() + interval '30 days', 1, 'live',
           jsonb_build_object('id', g::text), ${MAX_ATTEMPTS}, 'mapper_parsing_exception', 'parked'
    FROM generate_series(1, ${n}::int) AS g`.execute(db);
}

export const claimLatency: Benchmark = {
  name: "claim",
  title: "Claim latency (2500 jobs) vs table contents; tether's claim vs a plain (priority, enqueued_at) queue",
  async run(scope) {
    const { claimDue: due, claimExtra: extra, claimSamples: samples } = scope.sizes;
    const { db } = await scope.database();
    // The reference: a second database holding the due jobs only, claimed interleaved with every
    // condition below. Flatness is condition ÷ reference sample by sample, so the machine's drift
    // over the minutes this takes cancels out instead of reading as a change of the claim.
    const { db: ref } = await scope.database("ref");
    await sql`CREATE SEQUENCE bench_plain_job_seq`.execute(db);
    await sql`CREATE TABLE bench_plain_job (LIKE tether.job INCLUDING DEFAULTS)`.execute(db);
    await sql`ALTER TABLE bench_plain_job ADD PRIMARY KEY (id)`.execute(db);
    await sql`CREATE INDEX bench_plain_job_claim_idx ON bench_plain_job (priority, enqueued_at)`.execute(db);
    await addJobs(db, "tether.job", due, "due");
    await addJobs(db, "bench_plain_job", due, "due");
    await addJobs(ref, "tether.job", due, "due");
    await sql`VACUUM ANALYZE tether.job`.execute(ref);
    await sql`VACUUM ANALYZE tether.job`.execute(db);

    const series: Record<string, { tether: number[]; plain: number[]; reference: number[]; contents: string }> = {};
    const measure = async (label: string, contents: string) => {
      await sql`ANALYZE tether.job`.execute(db);
      await sql`ANALYZE bench_plain_job`.execute(db);
      const claims = [() => inRolledBack(db, tetherClaim), () => inRolledBack(db, plainClaim), () => inRolledBack(ref, tetherClaim)];
      for (let w = 0; w < 2; w++) for (const c of claims) await c();
      const s = { tether: [] as number[], plain: [] as number[], reference: [] as number[], contents };
      const into = [s.tether, s.plain, s.reference];
      for (let k = 0; k < samples; k++) {
        // Rotate which claim goes first: none of them always follows the same one.
        for (let j = 0; j < claims.length; j++) {
          const c = (k + j) % claims.length;
          into[c]!.push(await claims[c]!());
        }
      }
      series[label] = s;
      const med = (xs: number[]) => [...xs].sort((a, b) => a - b)[xs.length >> 1]!.toFixed(1);
      scope.log(`${label}: tether ${med(s.tether)} ms, plain ${med(s.plain)} ms, tether on the reference database ${med(s.reference)} ms`);
    };

    await measure("due only", `${due} due`);

    await addJobs(db, "tether.job", extra, "expired");
    await addJobs(db, "bench_plain_job", extra, "expired");
    // Tether's claim sweeps the expired jobs it meets (they sit at the front of its index), so
    // there is no "before the sweep" for it: the first claims move them out, committed, as the
    // drainer's first pass does. Timed as the sweep.
    const t = performance.now();
    let swept = 0;
    for (let moved = -1; moved !== 0; ) {
      moved = await db.transaction().execute(async (trx) => (await claimBatch(trx, { limit: LIMIT })).expired.reduce((a, m) => a + m.count, 0));
      swept += moved;
    }
    const sweepMs = performance.now() - t;
    if (swept !== extra) throw new Error(`sweep moved ${swept}/${extra}`);
    await measure(`+${extra} expired, after sweep`, `tether.job: ${due} due (expired moved to tether.dead_job, dead tuples not yet vacuumed); plain: ${due} due + ${extra} expired`);
    await sql`VACUUM tether.job`.execute(db);
    await measure(`+${extra} expired, after sweep + VACUUM`, `as above, tether.job vacuumed`);

    await sql`TRUNCATE tether.dead_job`.execute(db);
    await sql`DELETE FROM bench_plain_job WHERE expires_at <= now()`.execute(db);
    await sql`VACUUM bench_plain_job`.execute(db);
    await addParkedDead(db, extra);
    await addJobs(db, "bench_plain_job", extra, "parked");
    await measure(`+${extra} parked`, `tether: ${due} due in tether.job, ${extra} parked in tether.dead_job; plain: ${due} due + ${extra} rows with attempts exhausted`);

    await sql`TRUNCATE tether.dead_job`.execute(db);
    await sql`DELETE FROM bench_plain_job WHERE attempts >= ${MAX_ATTEMPTS}`.execute(db);
    await sql`VACUUM bench_plain_job`.execute(db);
    await addJobs(db, "tether.job", extra, "future");
    await addJobs(db, "bench_plain_job", extra, "future");
    await measure(`+${extra} future-scheduled`, `${due} due + ${extra} scheduled a day ahead (enqueued an hour ago) in both tables`);

    // Back to the first contents: does the table recover once the extra rows are gone?
    await sql`DELETE FROM tether.job WHERE scheduled_at > now()`.execute(db);
    await sql`DELETE FROM bench_plain_job WHERE scheduled_at > now()`.execute(db);
    await sql`VACUUM tether.job`.execute(db);
    await sql`VACUUM bench_plain_job`.execute(db);
    await measure("due only again", `${due} due, after everything above was removed and vacuumed`);

    const rows: ResultRow[] = [];
    for (const [label, s] of Object.entries(series)) {
      rows.push(
        compare({
          bench: "6 claim",
          metric: `claim ${LIMIT}: ${label}`,
          unit: "ms",
          better: "lower",
          spread: "p25-p75",
          tether: s.tether,
          baselineName: "plain (priority, enqueued_at)",
          baseline: s.plain,
          note: `${s.contents}; ${samples} claims each, in transactions rolled back, interleaved`,
        }),
      );
    }
    const flatness: ResultRow[] = [];
    for (const [label, s] of Object.entries(series)) {
      const control = label === "due only";
      flatness.push(
        compare({
          bench: "6 claim",
          metric: control ? "tether flatness: due only (control: same contents in both databases)" : `tether flatness: ${label}`,
          unit: "ms",
          better: "lower",
          spread: "p25-p75",
          tether: s.tether,
          baselineName: `tether, ${due} due only, reference database`,
          baseline: s.reference,
          ...(control
            ? { note: `the reference database is claimed interleaved with every condition; this row compares two databases with the same contents and should read 1.0× (figures are not gated when it is off by more than 10%)` }
            : { goal: { op: "<=" as const, value: 1.2 } }),
        }),
      );
    }
    gateOnControl(flatness, flatness[0]!);
    rows.push(...flatness);
    return { rows, info: { due, extra, samples, sweep: { moved: swept, ms: sweepMs, perSecond: swept / (sweepMs / 1000) } } };
  },
};
