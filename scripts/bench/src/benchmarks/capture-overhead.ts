import { sql, type Kysely } from "kysely";
import { enableCapture } from "@tether/core";
import { plainAnnotations } from "../plain-annotations.js";
import type { Benchmark } from "../benchmark.js";
import { timed } from "../benchmark.js";
import { compare, type ResultRow } from "../report.js";
import { percentiles } from "../stats.js";

const PRELOADED = 10_000;

async function fill(db: Kysely<any>, table: string, n: number, owner: string): Promise<void> {
  await sql`INSERT INTO ${sql.table(table)} (userid, target_uri, text)
            SELECT ${owner}, 'https://example.com/c/' || g, 'capture bench ' || g FROM generate_series(1, ${n}) g`.execute(db);
}

/**
 * The capture trigger's cost: the same statements on two identical tables of one database, one
 * with the trigger (version bump + job insert in the statement) and one without.
 */
export const captureOverhead: Benchmark = {
  name: "capture",
  title: "Capture trigger: single-row INSERT/UPDATE and a bulk UPDATE … WHERE, with the trigger vs the same statement without it",
  async run(scope) {
    const { captureSamples: m, captureBulkRows: bulk, reps } = scope.sizes;
    const d = await scope.database();
    const db = d.db;
    await sql`CREATE TABLE annotation_plain (LIKE annotation INCLUDING ALL)`.execute(db);
    await enableCapture(db, plainAnnotations);
    for (const t of ["annotation", "annotation_plain"]) await fill(db, t, PRELOADED, "acct:single@example.com");
    const ids = (await sql<{ id: string }>`SELECT id FROM annotation ORDER BY id`.execute(db)).rows.map((r) => r.id);
    const pick = () => ids[Math.floor(Math.random() * ids.length)]!;
    let k = 0;
    const single = {
      updateCaptured: () => sql`UPDATE annotation SET text = ${`edit ${k++}`} WHERE id = ${pick()}`.execute(db),
      updatePlain: () => sql`UPDATE annotation_plain SET text = ${`edit ${k++}`} WHERE id = ${pick()}`.execute(db),
      insertCaptured: () => sql`INSERT INTO annotation (userid, target_uri, text) VALUES ('acct:new@example.com', 'https://example.com/n', ${`new ${k++}`})`.execute(db),
      insertPlain: () => sql`INSERT INTO annotation_plain (userid, target_uri, text) VALUES ('acct:new@example.com', 'https://example.com/n', ${`new ${k++}`})`.execute(db),
    };
    type V = keyof typeof single;
    const names = Object.keys(single) as V[];
    const perRep: Record<V, { p50: number; p99: number }[]> = { updateCaptured: [], updatePlain: [], insertCaptured: [], insertPlain: [] };
    for (let w = 0; w < 50; w++) for (const v of names) await single[v]();
    for (let rep = 0; rep < reps; rep++) {
      const lat: Record<V, number[]> = { updateCaptured: [], updatePlain: [], insertCaptured: [], insertPlain: [] };
      for (let i = 0; i < m; i++) {
        for (const v of names) lat[v].push(await timed(() => single[v]()));
      }
      for (const v of names) perRep[v].push(percentiles(lat[v]));
      scope.log(`rep ${rep + 1}: p50 ms ${names.map((v) => `${v} ${perRep[v].at(-1)!.p50.toFixed(3)}`).join(", ")}`);
    }

    // Bulk: the same UPDATE … WHERE over `bulk` rows of each table, vacuumed alike before every run.
    for (const t of ["annotation", "annotation_plain"]) await fill(db, t, bulk, "acct:bulk@example.com");
    // Two statements: a plain edit (the trigger bumps each row) and a data migration that bumps
    // the versions itself (the trigger's WHEN clause skips the per-row function).
    const statements = {
      edit: (t: string) => sql`UPDATE ${sql.table(t)} SET text = text || '.' WHERE userid = 'acct:bulk@example.com'`,
      selfBump: (t: string) => sql`UPDATE ${sql.table(t)} SET text = text || '.', version = version + 1 WHERE userid = 'acct:bulk@example.com'`,
    };
    type S = keyof typeof statements;
    const bulkMs: Record<S, { captured: number[]; plain: number[] }> = { edit: { captured: [], plain: [] }, selfBump: { captured: [], plain: [] } };
    // The floor: the same number of job rows inserted on their own (heap, three indexes, WAL),
    // which no trigger design can avoid while each changed row gets its own job.
    const jobsAloneMs: number[] = [];
    const jobsAlone = () =>
      sql`INSERT INTO tether.job (name, scheduled_at, priority, tag, kwargs)
          SELECT ${plainAnnotations.jobName}, now() + interval '60 seconds', 1, 'capture', jsonb_build_object('id', g::text) FROM generate_series(1, ${bulk}) g`.execute(db);
    for (let rep = 0; rep < reps; rep++) {
      for (const s of Object.keys(statements) as S[]) {
        await sql`TRUNCATE tether.job`.execute(db);
        await sql`VACUUM ANALYZE annotation, annotation_plain, tether.job`.execute(db);
        // Alternate the order so neither table always runs on a warmer cache.
        const order = rep % 2 === 0 ? (["captured", "plain"] as const) : (["plain", "captured"] as const);
        for (const which of order) {
          const table = which === "captured" ? "annotation" : "annotation_plain";
          bulkMs[s][which].push(await timed(() => statements[s](table).execute(db)));
        }
        const jobs = await sql<{ n: string }>`SELECT count(*) AS n FROM tether.job`.execute(db);
        scope.log(`bulk ${s} rep ${rep + 1}: captured ${bulkMs[s].captured.at(-1)!.toFixed(0)} ms (${jobs.rows[0]!.n} jobs), plain ${bulkMs[s].plain.at(-1)!.toFixed(0)} ms`);
      }
      await sql`TRUNCATE tether.job`.execute(db);
      await sql`VACUUM ANALYZE tether.job`.execute(db);
      jobsAloneMs.push(await timed(() => jobsAlone()));
      scope.log(`bulk rep ${rep + 1}: ${bulk} job rows alone ${jobsAloneMs.at(-1)!.toFixed(0)} ms`);
    }

    const rows: ResultRow[] = [];
    const pairs: [V, V, string][] = [
      ["updateCaptured", "updatePlain", "single-row UPDATE by id"],
      ["insertCaptured", "insertPlain", "single-row INSERT"],
    ];
    for (const [a, b, metric] of pairs) {
      for (const p of ["p50", "p99"] as const) {
        rows.push(
          compare({
            bench: "capture",
            metric: `${metric} ${p}`,
            unit: "ms",
            better: "lower",
            tether: perRep[a].map((x) => x[p]),
            baselineName: "same statement, no trigger",
            baseline: perRep[b].map((x) => x[p]),
            ...(p === "p50" && a === "updateCaptured" ? { note: `${m} autocommit statements per variant per repetition, interleaved; goal ≤ 1.3×` } : {}),
          }),
        );
      }
    }
    rows.push(
      compare({
        bench: "capture",
        metric: `UPDATE … WHERE of ${bulk} rows`,
        unit: "ms",
        better: "lower",
        tether: bulkMs.edit.captured,
        baselineName: "same statement, no trigger",
        baseline: bulkMs.edit.plain,
        note: `one statement; the trigger bumps ${bulk} versions (one plpgsql call per row) and inserts ${bulk} jobs with one INSERT … SELECT; goal ≤ 1.5×`,
      }),
      compare({
        bench: "capture",
        metric: `floor: the plain UPDATE plus ${bulk} job rows inserted alone`,
        unit: "ms",
        better: "lower",
        tether: bulkMs.edit.plain.map((p, i) => p + jobsAloneMs[i]!),
        baselineName: "same statement, no trigger",
        baseline: bulkMs.edit.plain,
        note: "what any capture of this statement costs at least: one job row per changed row, nothing else",
      }),
      compare({
        bench: "capture",
        metric: `UPDATE … SET version = version + 1 WHERE, ${bulk} rows`,
        unit: "ms",
        better: "lower",
        tether: bulkMs.selfBump.captured,
        baselineName: "same statement, no trigger",
        baseline: bulkMs.selfBump.plain,
        note: "a data migration that bumps versions itself: no per-row function call, only the job insert",
      }),
    );
    return { rows, info: { singleSamplesPerRep: m, bulkRows: bulk, bulkMs, jobsAloneMs } };
  },
};
