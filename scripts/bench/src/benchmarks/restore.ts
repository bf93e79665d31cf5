import { sql, type Kysely } from "kysely";
import { Drainer, enqueueReindex, raiseVersionFloor } from "@tether/core";
import { insertJobs } from "@tether/core/internal";
import { backupDatabase, restoreBackup, snapshotRepository } from "@tether/testkit";
import { plainAnnotations } from "../plain-annotations.js";
import { resetIndex, seedAnnotations } from "../annotation-data.js";
import type { Benchmark } from "../benchmark.js";
import { compare } from "../report.js";
import { startDaemonProcess } from "../restore/daemon-process.js";
import { untilParity } from "../restore/parity.js";

/** Edits the first `n` rows as the application would (a new version, a job due at once), `round` naming the edit. */
async function edit(db: Kysely<any>, n: number, round: string): Promise<void> {
  const r = await sql<{ id: string }>`
    UPDATE annotation SET text = text || ${` (${round})`}, version = tether.next_version(version) WHERE id <= ${n} RETURNING id::text AS id`.execute(db);
  for (let i = 0; i < r.rows.length; i += 10_000) {
    await insertJobs(db, r.rows.slice(i, i + 10_000).map((x) => ({ name: plainAnnotations.jobName, entityId: x.id, priority: 1, tag: "bench", delayMs: 0 })));
  }
}

async function jobsLeft(db: Kysely<any>): Promise<number> {
  return Number((await sql<{ n: string }>`SELECT count(*) AS n FROM tether.job`.execute(db)).rows[0]!.n);
}

/**
 * Time to parity after either side went back in time, with the drainer daemon running at its
 * defaults and no command typed: 100k documents in sync; a backup; 10% of the rows edited and
 * drained; the backup restored and the same edits made again (users redo their work), timed from
 * the restore until every document equals its row. Then the same after an index restore: a
 * snapshot, 10% edited and drained, the snapshot restored. Each against a plain re-index drain of
 * the same 100k, in the same run.
 */
export const restore: Benchmark = {
  name: "restore",
  title: "Time to parity after a Postgres restore and after an index restore (drainer daemon at its defaults) vs a re-index drain",
  sinks: ["elasticsearch", "opensearch"],
  async run(scope) {
    const n = scope.sizes.restoreDocs;
    const changed = Math.max(1, Math.round(n / 10));
    const d = await scope.database("", 20);
    const sink = scope.engineSink();
    await seedAnnotations(d.db, n);
    // As `tether migrate` does for rows written before Tether: the sequence above them.
    await raiseVersionFloor(d.db, plainAnnotations);

    // The baseline: a plain re-index drain of the same 100k into an empty index.
    const reindex: number[] = [];
    for (let rep = 0; rep < scope.sizes.reps; rep++) {
      await resetIndex(sink, plainAnnotations.index);
      await enqueueReindex(d.db, plainAnnotations, { scope: "all" });
      const t = performance.now();
      const r = await new Drainer({ db: d.db, sink, collections: [plainAnnotations], concurrency: 2 }).drainUntilEmpty();
      if (r.error || r.repaired !== n) throw new Error(`re-index drain repaired ${r.repaired}/${n}: ${r.error ?? JSON.stringify(r)}`);
      reindex.push((performance.now() - t) / 1000);
      scope.log(`re-index drain of ${n}: ${reindex.at(-1)!.toFixed(1)} s`);
    }
    await sink.refreshIndex(plainAnnotations.index);
    // What the version floor check costs the engine: one max aggregation (median of 5).
    const floorMs: number[] = [];
    for (let i = 0; i < 5; i++) {
      const t = performance.now();
      if ((await sink.highestVersion(plainAnnotations.index)) === undefined) throw new Error("no highest version");
      floorMs.push(performance.now() - t);
    }
    floorMs.sort((a, b) => a - b);
    scope.log(`version floor check (highestVersion of ${n} documents): ${floorMs[2]!.toFixed(1)} ms median`);

    const daemon = await startDaemonProcess({
      DATABASE_URL: d.url,
      TETHER_INDEX_PREFIX: scope.indexPrefix,
      TETHER_SINK: scope.env.sinkKind,
      ...(scope.env.sinkKind === "opensearch" ? { OPENSEARCH_URL: scope.env.esUrl } : { ELASTICSEARCH_URL: scope.env.esUrl }),
    });
    scope.defer(() => daemon.stop());
    const drained = async (what: string) => {
      const t = performance.now();
      while ((await jobsLeft(d.db)) > 0) {
        if (performance.now() - t > 1_800_000) throw new Error(`the daemon did not drain ${what}`);
        await new Promise((r) => setTimeout(r, 200));
      }
    };

    // Postgres goes back: a backup, 10% edited and drained, the backup restored, the edits made again.
    const postgres: number[] = [];
    const backup = await backupDatabase(d.url);
    scope.defer(async () => backup.remove());
    await edit(d.db, changed, "after the backup");
    await drained("the edits after the backup");
    const restoreStarted = performance.now();
    await restoreBackup(d.url, backup);
    const restoredMs = performance.now() - restoreStarted;
    const t0 = performance.now();
    await edit(d.db, changed, "after the backup");
    postgres.push((await untilParity(d.db, sink, changed, t0)) / 1000);
    scope.log(`Postgres restore (pg_restore ${(restoredMs / 1000).toFixed(1)} s): parity ${postgres[0]!.toFixed(1)} s after the writes made again began`);

    // The index goes back: a snapshot, 10% edited and drained, the snapshot restored.
    const index: number[] = [];
    const repo = await snapshotRepository(scope.env.esUrl, `${scope.indexPrefix}snapshots`);
    scope.defer(() => repo.remove());
    const concrete = sink.indexName(plainAnnotations.index);
    await sink.refreshIndex(plainAnnotations.index);
    const snap = await repo.snapshot(concrete);
    await edit(d.db, changed, "after the snapshot");
    await drained("the edits after the snapshot");
    // The maintenance leader's next cycles see the newest writes (a search: after a refresh).
    await sink.refreshIndex(plainAnnotations.index);
    await new Promise((r) => setTimeout(r, 35_000));
    const t1 = performance.now();
    await repo.restore(snap, concrete);
    index.push((await untilParity(d.db, sink, changed, t1)) / 1000);
    scope.log(`index restore: parity ${index[0]!.toFixed(1)} s after the snapshot was restored`);

    const goal = { op: "<=" as const, value: 1.5 };
    // One restore of each side against the median re-index (the first repetition runs on a cold engine).
    const baseline = [[...reindex].sort((a, b) => a - b)[Math.floor(reindex.length / 2)]!];
    const note =
      "daemon at its defaults (maintenance 15 s, LISTEN wake-ups, fast verify afterRestoreMs 5 min), no command typed; parity = no job left and every edited row's document at its version with its body; baseline = Drainer.drainUntilEmpty of a re-index of every row into an empty index, concurrency 2";
    return {
      rows: [
        compare({ bench: "restore", metric: `time to parity after a Postgres restore, N=${n}, ${changed} written again (goal ≤ 1.5× a re-index)`, unit: "s", better: "lower", tether: postgres, baselineName: `re-index drain of ${n} (median)`, baseline, goal, note }),
        compare({ bench: "restore", metric: `time to parity after an index restore, N=${n}, ${changed} lost (goal ≤ 1.5× a re-index)`, unit: "s", better: "lower", tether: index, baselineName: `re-index drain of ${n} (median)`, baseline, goal, note }),
      ],
      info: { docs: n, changed, pgRestoreSeconds: restoredMs / 1000, highestVersionMs: floorMs },
    };
  },
};
