import type { Command } from "commander";
import { deepVerifyCollection, DRIFT_KINDS, indexReadiness, verifyCollection, VerifyNeedsRebuildError, type Collection, type DeepVerifyReport, type VerifyReport } from "@tether/core";
import { updateVerifyRunProgress } from "@tether/core/internal";
import { CommandFailedError } from "../cli-errors.js";
import { intOption, listOption, output, pickCollection, withCommonOptions, withContext, type CommonOptions } from "../command-kit.js";
import { ProgressReporter } from "../progress-reporter.js";
import { recordVerifyRun } from "./verify-run-record.js";

interface VerifyCliOptions extends CommonOptions {
  collection?: string;
  bucketSize?: number;
  leafSize?: number;
  enqueue: boolean;
  failOnDrift?: boolean;
  deep?: boolean;
  ids?: string[];
  keepOrphans?: boolean;
}

export interface VerifyCliReport {
  collections: VerifyReport[];
  /** With `--deep`: the content comparison of each collection. */
  deep?: DeepVerifyReport[];
  /**
   * Collections of uuid or text ids whose documents predate the bucket key: verified by the deep
   * pass instead, until `tether rebuild` gives every document its key.
   */
  needsRebuild?: { collection: string; unkeyed: number; message: string }[];
  driftedTotal: number;
  enqueued: number;
  orphans: number;
}

function renderDeep(r: DeepVerifyReport): string {
  const kinds = Object.entries(r.drifted).filter(([, n]) => n > 0).map(([k, n]) => `${k} ${n}`);
  const lines = [
    `${r.collection} (deep): read ${r.scanned} document(s) in ${(r.durationMs / 1000).toFixed(2)} s (${Math.round(r.docsPerSecond)} docs/s)`,
    r.driftedTotal === 0 ? "  no content drift" : `  drifted ${r.driftedTotal}: ${kinds.join(", ")}; enqueued ${r.enqueued} repair job(s)`,
  ];
  if (r.orphans > 0) lines.push(`  orphans (no tether metadata) ${r.orphans}, removed ${r.orphansRemoved}`);
  for (const [k, ids] of Object.entries(r.samples)) if (ids.length > 0) lines.push(`  e.g. ${k}: ${ids.join(", ")}`);
  return lines.join("\n");
}

function render(r: VerifyReport): string {
  const kinds = DRIFT_KINDS.filter((k) => r.drifted[k] > 0).map((k) => `${k} ${r.drifted[k]}`);
  const lines = [
    `${r.collection}: compared ${r.bucketsCompared} bucket(s), ${r.bucketsDiffering} differing, ${r.leavesCompared} compared id by id, in ${(r.durationMs / 1000).toFixed(2)} s`,
    r.driftedTotal === 0 ? "  no drift" : `  drifted ${r.driftedTotal}: ${kinds.join(", ")}; enqueued ${r.enqueued} repair job(s)`,
  ];
  for (const k of DRIFT_KINDS) if (r.samples[k].length > 0) lines.push(`  e.g. ${k}: ${r.samples[k].join(", ")}`);
  if (r.orphans > 0) lines.push(`  ${r.orphans} document(s) without tether metadata (orphans): run with --deep to list and remove them`);
  return lines.join("\n");
}

/** `tether verify`: full anti-entropy comparison of Postgres and Elasticsearch, repairs enqueued. */
export function registerVerify(program: Command): void {
  withCommonOptions(
    program
      .command("verify")
      .description("compare every entity of a collection on both sides (bucketed hashes, drilling into differences) and enqueue repairs for drift")
      .option("--collection <name>", "verify one collection (default: every configured collection)")
      .option("--bucket-size <n>", "ids per top-level bucket (default 10000)", intOption(1, 1_000_000_000))
      .option("--leaf-size <n>", "differing buckets of at most this many ids are compared id by id (default 64; up to 2000 where most buckets differ)", intOption(1, 100_000))
      .option("--no-enqueue", "report drift without enqueuing repair jobs")
      .option("--fail-on-drift", "exit 1 when drift was found")
      .option("--deep", "also read every document and compare its content with the one rebuilt from its row (content drift, orphans)")
      .option("--ids <a,b,c>", "with --deep: only these ids (the bucketed pass is skipped)", listOption)
      .option("--keep-orphans", "with --deep: report documents without tether metadata but leave them in the index"),
  ).action(async (opts: VerifyCliOptions) => {
    const deep: DeepVerifyReport[] = [];
    const needsRebuild: NonNullable<VerifyCliReport["needsRebuild"]> = [];
    const reports = await withContext(opts, async (ctx) => {
      const targets: readonly Collection<any>[] = opts.collection === undefined ? ctx.collections : [pickCollection(ctx, opts.collection)];
      const out: VerifyReport[] = [];
      for (const collection of targets) {
        // Verify only reads: it never creates the index (that takes a privilege it does not need).
        const [index] = await indexReadiness(ctx.sink, [collection], { rethrow: true, call: { timeoutMs: 30_000 } });
        if (index!.state === "missing") throw new CommandFailedError(`${collection.name} (index ${collection.index}): the index does not exist, so there is nothing to verify: run \`tether migrate\` to create it, then \`tether verify\``);
        const showBar = !opts.json || process.stdout.isTTY === true;
        const bar = showBar
          ? new ProgressReporter({
              barFormat: `verifying ${collection.name} [{bar}] {value}/{total} buckets | {differing} differing, {drifted} drifted`,
              line: (v, t, p) => `verifying ${collection.name}: ${v}/${t} buckets, ${p.differing} differing, ${p.drifted} drifted`,
            })
          : undefined;
        const deepPass = () =>
          deepVerifyCollection(ctx.db, ctx.sink, collection, { ...(opts.ids ? { ids: opts.ids } : {}), enqueue: opts.enqueue, keepOrphans: opts.keepOrphans === true });
        // A whole collection's run is recorded (tether.verify_run, trigger cli); one of a few --ids is not.
        const runDeep = () =>
          opts.ids
            ? deepPass()
            : recordVerifyRun(ctx.db, collection.name, "deep", deepPass, (r) => ({
                bucketsCompared: 0, bucketsDiffering: 0, drifted: r.drifted, driftedTotal: r.driftedTotal, enqueued: r.enqueued, samples: r.samples, documentsCompared: r.scanned,
              }));
        if (opts.deep) {
          deep.push(await runDeep());
          if (opts.ids) continue;
        }
        try {
          out.push(
            await recordVerifyRun(
              ctx.db,
              collection.name,
              "fast",
              async (runId) => {
                // Progress writes are chained so they land in order, and never block the comparison.
                let progress = Promise.resolve();
                const report = await verifyCollection(ctx.db, ctx.sink, collection, {
                  ...(opts.bucketSize !== undefined ? { bucketSize: opts.bucketSize } : {}),
                  ...(opts.leafSize !== undefined ? { leafSize: opts.leafSize } : {}),
                  enqueue: opts.enqueue,
                  onProgress: (p) => {
                    progress = progress.then(() =>
                      updateVerifyRunProgress(ctx.db, runId, { bucketsTotal: p.total, bucketsDone: p.done, bucketsDiffering: p.bucketsDiffering, driftedTotal: p.drifted }).catch(() => undefined),
                    );
                    if (!bar) return;
                    if (p.done === 0) bar.start(p.total, { differing: 0, drifted: 0 });
                    else bar.update(p.done, { differing: p.bucketsDiffering, drifted: p.drifted });
                  },
                });
                await progress;
                return report;
              },
              (r) => ({ ...r, documentsCompared: r.documentsCompared }),
            ),
          );
        } catch (err) {
          if (!(err instanceof VerifyNeedsRebuildError)) throw err;
          // Documents of uuid or text ids written before they had a bucket key: the deep pass needs none.
          needsRebuild.push({ collection: collection.name, unkeyed: err.unkeyed, message: err.message });
          if (!opts.deep) deep.push(await runDeep());
        } finally {
          bar?.stop();
        }
      }
      return out;
    });
    const report: VerifyCliReport = {
      collections: reports,
      ...(deep.length > 0 ? { deep } : {}),
      ...(needsRebuild.length > 0 ? { needsRebuild } : {}),
      // A collection the buckets also compared counts only its content drift from the deep pass.
      driftedTotal:
        reports.reduce((a, r) => a + r.driftedTotal, 0) + deep.reduce((a, r) => a + (reports.some((b) => b.collection === r.collection) ? r.drifted.content : r.driftedTotal), 0),
      enqueued: reports.reduce((a, r) => a + r.enqueued, 0) + deep.reduce((a, r) => a + r.enqueued, 0),
      orphans: deep.length > 0 ? deep.reduce((a, r) => a + r.orphans, 0) : reports.reduce((a, r) => a + r.orphans, 0),
    };
    output(opts, report, () => [...needsRebuild.map((n) => `${n.message}; verified by the deep pass meanwhile`), ...deep.map(renderDeep), ...reports.map(render)].join("\n"));
    if (opts.failOnDrift && report.driftedTotal > 0) throw new CommandFailedError(`${report.driftedTotal} drifted entit${report.driftedTotal === 1 ? "y" : "ies"} found`);
  });
}
