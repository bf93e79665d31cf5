import type { Command } from "commander";
import { DRIFT_KINDS, verifyCollection, type Collection, type VerifyReport } from "@tether/core";
import { CommandFailedError } from "../cli-errors.js";
import { intOption, output, pickCollection, withCommonOptions, withContext, type CommonOptions } from "../command-kit.js";
import { ProgressReporter } from "../progress-reporter.js";

interface VerifyCliOptions extends CommonOptions {
  collection?: string;
  bucketSize?: number;
  leafSize?: number;
  enqueue: boolean;
  failOnDrift?: boolean;
}

export interface VerifyCliReport {
  collections: VerifyReport[];
  driftedTotal: number;
  enqueued: number;
}

function render(r: VerifyReport): string {
  const kinds = DRIFT_KINDS.filter((k) => r.drifted[k] > 0).map((k) => `${k} ${r.drifted[k]}`);
  const lines = [
    `${r.collection}: compared ${r.bucketsCompared} bucket(s), ${r.bucketsDiffering} differing, ${r.leavesCompared} compared id by id, in ${(r.durationMs / 1000).toFixed(2)} s`,
    r.driftedTotal === 0 ? "  no drift" : `  drifted ${r.driftedTotal}: ${kinds.join(", ")}; enqueued ${r.enqueued} repair job(s)`,
  ];
  for (const k of DRIFT_KINDS) if (r.samples[k].length > 0) lines.push(`  e.g. ${k}: ${r.samples[k].join(", ")}`);
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
      .option("--leaf-size <n>", "differing buckets of at most this many ids are compared id by id (default 2000)", intOption(1, 100_000))
      .option("--no-enqueue", "report drift without enqueuing repair jobs")
      .option("--fail-on-drift", "exit 1 when drift was found"),
  ).action(async (opts: VerifyCliOptions) => {
    const reports = await withContext(opts, async (ctx) => {
      const targets: readonly Collection<any>[] = opts.collection === undefined ? ctx.collections : [pickCollection(ctx, opts.collection)];
      const out: VerifyReport[] = [];
      for (const collection of targets) {
        // Without the index, the aggregations would fail; with it, everything shows as missing.
        await ctx.sink.ensureIndex(collection.index, collection.mappings);
        const showBar = !opts.json || process.stdout.isTTY === true;
        const bar = showBar
          ? new ProgressReporter({
              barFormat: `verifying ${collection.name} [{bar}] {value}/{total} buckets | {differing} differing, {drifted} drifted`,
              line: (v, t, p) => `verifying ${collection.name}: ${v}/${t} buckets, ${p.differing} differing, ${p.drifted} drifted`,
            })
          : undefined;
        try {
          out.push(
            await verifyCollection(ctx.db, ctx.sink, collection, {
              ...(opts.bucketSize !== undefined ? { bucketSize: opts.bucketSize } : {}),
              ...(opts.leafSize !== undefined ? { leafSize: opts.leafSize } : {}),
              enqueue: opts.enqueue,
              onProgress: (p) => {
                if (!bar) return;
                if (p.done === 0) bar.start(p.total, { differing: 0, drifted: 0 });
                else bar.update(p.done, { differing: p.bucketsDiffering, drifted: p.drifted });
              },
            }),
          );
        } finally {
          bar?.stop();
        }
      }
      return out;
    });
    const report: VerifyCliReport = {
      collections: reports,
      driftedTotal: reports.reduce((a, r) => a + r.driftedTotal, 0),
      enqueued: reports.reduce((a, r) => a + r.enqueued, 0),
    };
    output(opts, report, () => reports.map(render).join("\n"));
    if (opts.failOnDrift && report.driftedTotal > 0) throw new CommandFailedError(`${report.driftedTotal} drifted entit${report.driftedTotal === 1 ? "y" : "ies"} found`);
  });
}
