import type { Command } from "commander";
import { SingleBar } from "cli-progress";
import { Drainer, queueStats, type DrainResult } from "@tether/core";
import { CommandFailedError, UsageError } from "../cli-errors.js";
import { intOption, output, withCommonOptions, withContext, type CommonOptions } from "../command-kit.js";

interface DrainOptions extends CommonOptions {
  once?: boolean;
  untilEmpty?: boolean;
  batchSize?: number;
  concurrency?: number;
  deadlineMs?: number;
  maxAttempts?: number;
}

const OUTCOMES = ["up_to_date", "repaired", "deleted_downstream", "forced", "parked", "retried", "expired"] as const;

export interface DrainReport extends DrainResult {
  mode: "once" | "until-empty";
  passes: number;
}

function render(r: DrainReport): string {
  const parts = OUTCOMES.filter((k) => r[k] > 0).map((k) => `${k} ${r[k]}`);
  return `drained ${r.claimed} job(s) in ${r.passes} pass(es), ${(r.durationMs / 1000).toFixed(2)} s${parts.length ? `: ${parts.join(", ")}` : ""}`;
}

/** `tether drain --once | --until-empty`: runs the verifying drainer in this process. */
export function registerDrain(program: Command): void {
  withCommonOptions(
    program
      .command("drain")
      .description("verify and repair due jobs now; exits 1 if a pass failed or jobs had to be retried")
      .option("--once", "run one pass")
      .option("--until-empty", "run passes until one claims nothing (shows a progress bar on stderr)")
      .option("--batch-size <n>", "jobs claimed per pass (default 2500)", intOption(1, 100_000))
      .option("--concurrency <n>", "passes side by side with --until-empty (default 2)", intOption(1, 32))
      .option("--deadline-ms <ms>", "deadline of one drain transaction (default 30000)", intOption(1, 3_600_000))
      .option("--max-attempts <n>", "permanent failures tolerated before a job is parked (default 5)", intOption(1, 1_000)),
  ).action(async (opts: DrainOptions) => {
    if (Boolean(opts.once) === Boolean(opts.untilEmpty)) throw new UsageError("pass exactly one of --once and --until-empty");
    const report = await withContext(opts, async (ctx): Promise<DrainReport> => {
      // A missing index would be auto-created with guessed mappings by the first bulk write.
      for (const c of ctx.collections) await ctx.sink.ensureIndex(c.index, c.mappings);
      // Flags override the config's options.drainer, which override core's defaults.
      const { intervalMs: _interval, intervalJitter: _jitter, ...configured } = ctx.options.drainer ?? {};
      const drainer = new Drainer({
        ...configured,
        db: ctx.db,
        sink: ctx.sink,
        collections: ctx.collections,
        logger: ctx.logger,
        ...(opts.batchSize !== undefined ? { batchSize: opts.batchSize } : {}),
        concurrency: opts.concurrency ?? configured.concurrency ?? 2,
        ...(opts.deadlineMs !== undefined ? { deadlineMs: opts.deadlineMs } : {}),
        ...(opts.maxAttempts !== undefined ? { maxAttempts: opts.maxAttempts } : {}),
      });
      if (opts.once) return { mode: "once", passes: 1, ...(await drainer.drainOnce()) };

      const showBar = !opts.json || process.stdout.isTTY === true;
      let bar: SingleBar | undefined;
      if (showBar) {
        const stats = await queueStats(ctx.db);
        const paused = new Set(stats.paused.map((p) => p.name));
        const due = stats.byName.filter((g) => !paused.has(g.name)).reduce((a, g) => a + g.due, 0);
        bar = new SingleBar({
          stream: process.stderr,
          format: "draining [{bar}] {value}/{total} jobs | {repaired} repaired, {parked} parked, {retried} retried",
          noTTYOutput: true,
          notTTYSchedule: 1_000,
          hideCursor: false,
        });
        bar.start(due, 0, { repaired: 0, parked: 0, retried: 0 });
      }
      let passes = 0;
      let done = 0;
      const sums = { repaired: 0, parked: 0, retried: 0 };
      try {
        const total = await drainer.drainUntilEmpty({
          onPass: (r) => {
            passes += 1;
            sums.repaired += r.repaired + r.deleted_downstream + r.forced;
            sums.parked += r.parked;
            sums.retried += r.retried;
            if (bar) {
              // Jobs that left the queue; the total grows if writes arrive while draining.
              done += r.claimed - r.retried;
              if (done > bar.getTotal()) bar.setTotal(done);
              bar.update(done, sums);
            }
          },
        });
        return { mode: "until-empty", passes, ...total };
      } finally {
        bar?.stop();
      }
    });
    output(opts, report, () => render(report));
    if (report.error) throw new CommandFailedError(`drain pass failed: ${report.error}`);
    if (report.retried > 0) throw new CommandFailedError(`${report.retried} job(s) could not be confirmed and stay queued with a backoff (see \`tether parked list\` and last_error)`);
  });
}
