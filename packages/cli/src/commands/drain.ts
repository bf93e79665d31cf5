import type { Command } from "commander";
import { Drainer, queueStats, type DrainResult } from "@tether/core";
import { CommandFailedError, EXIT_TIMEOUT, EXIT_WORK_LEFT, UsageError } from "../cli-errors.js";
import { intOption, output, withCommonOptions, withContext, type CommonOptions } from "../command-kit.js";
import { checkIndexesAtStartUp } from "../drain-start-up.js";
import { drainUntilEmpty, type UntilEmptyResult } from "../drain-until-empty.js";
import { ProgressReporter } from "../progress-reporter.js";

interface DrainOptions extends CommonOptions {
  once?: boolean;
  untilEmpty?: boolean;
  batchSize?: number;
  concurrency?: number;
  deadlineMs?: number;
  maxAttempts?: number;
  timeout?: number;
  giveUpAfter?: number;
}

const OUTCOMES = ["up_to_date", "repaired", "deleted_downstream", "forced", "parked", "retried", "raised", "expired"] as const;

export type DrainReport = ({ mode: "once"; passes: number } & DrainResult) | ({ mode: "until-empty" } & UntilEmptyResult);

function render(r: DrainReport): string {
  const parts = OUTCOMES.filter((k) => r[k] > 0).map((k) => `${k} ${r[k]}`);
  return `drained ${r.claimed} job(s) in ${r.passes} pass(es), ${(r.durationMs / 1000).toFixed(2)} s${parts.length ? `: ${parts.join(", ")}` : ""}`;
}

/** What is left after `--until-empty` stopped, or undefined when nothing needs an operator. */
function leftover(r: UntilEmptyResult): { message: string; exitCode: number } | undefined {
  const left = r.remaining;
  const what = [
    `${left.failing} failing or not yet due`,
    `${left.paused} in paused lane(s)${left.pausedLanes.length ? ` (${left.pausedLanes.join(", ")})` : ""}`,
    `${left.parkedNow} parked by this drain (${left.parkedTotal} parked in all)`,
  ].join(", ");
  if (r.stop === "timeout") return { message: `drain stopped at its --timeout with work left: ${what}`, exitCode: EXIT_TIMEOUT };
  if (r.stop === "stuck") {
    const why = r.lastError ? `; last error: ${r.lastError}` : "";
    return { message: `drain stopped: ${r.rounds} round(s) made no progress and only work that cannot finish now remains: ${what}${why} (see \`tether status\`, \`tether parked list\`, last_error)`, exitCode: EXIT_WORK_LEFT };
  }
  if (left.paused > 0 || left.parkedNow > 0) {
    return { message: `queue drained except work an operator must unblock: ${what} (see \`tether status\`, \`tether resume\`, \`tether parked list\`)`, exitCode: EXIT_WORK_LEFT };
  }
  return undefined;
}

/** `tether drain --once | --until-empty`: runs the verifying drainer in this process. */
export function registerDrain(program: Command): void {
  withCommonOptions(
    program
      .command("drain")
      .description("verify and repair due jobs now (exit codes: 0 drained, 1 failed, 3 only parked/paused/failing work left, 4 --timeout reached)")
      .option("--once", "run one pass")
      .option("--until-empty", "drain until the queue is empty, waiting out backoffs and grace periods (progress on stderr)")
      .option("--batch-size <n>", "jobs claimed per pass (default 2500)", intOption(1, 100_000))
      .option("--concurrency <n>", "passes writing to the engine at a time with --until-empty, plus one batch ahead (default 2)", intOption(1, 32))
      .option("--deadline-ms <ms>", "deadline of one drain transaction (default 30000)", intOption(1, 3_600_000))
      .option("--max-attempts <n>", "permanent failures tolerated before a job is parked (default 5)", intOption(1, 1_000))
      .option("--timeout <seconds>", "with --until-empty: stop after this long (default 3600)", intOption(1, 7 * 86_400))
      .option("--give-up-after <rounds>", "with --until-empty: stop after this many rounds in a row confirm nothing (default 5)", intOption(1, 1_000)),
  ).action(async (opts: DrainOptions) => {
    if (Boolean(opts.once) === Boolean(opts.untilEmpty)) throw new UsageError("pass exactly one of --once and --until-empty");
    if (opts.once && (opts.timeout !== undefined || opts.giveUpAfter !== undefined)) throw new UsageError("--timeout and --give-up-after go with --until-empty");
    const report = await withContext(opts, async (ctx): Promise<DrainReport> => {
      // Flags override the config's options.drainer, which override core's defaults.
      const { intervalMs: _interval, intervalJitter: _jitter, ...configured } = ctx.options.drainer ?? {};
      // The start-up calls run inside the operator's bounds too, never the client's own timeout.
      const deadlineMs = opts.deadlineMs ?? configured.deadlineMs ?? 30_000;
      const timeoutMs = opts.once ? Infinity : (opts.timeout ?? 3_600) * 1_000;
      await checkIndexesAtStartUp(ctx, Math.min(deadlineMs, timeoutMs), deadlineMs <= timeoutMs ? `--deadline-ms ${deadlineMs}` : `--timeout ${opts.timeout ?? 3_600}`);
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

      const showProgress = !opts.json || process.stdout.isTTY === true;
      const progress = showProgress
        ? new ProgressReporter({
            barFormat: "draining [{bar}] {value}/{total} jobs | {repaired} repaired, {parked} parked, {retried} retried",
            line: (v, t, p) => `draining: ${v}/${t} jobs done, ${p.repaired} repaired, ${p.parked} parked, ${p.retried} retried`,
          })
        : undefined;
      if (progress) {
        const stats = await queueStats(ctx.db);
        const paused = new Set(stats.paused.map((p) => p.name));
        progress.start(stats.byName.filter((g) => !paused.has(g.name)).reduce((a, g) => a + g.total, 0), { repaired: 0, parked: 0, retried: 0 });
      }
      let done = 0;
      const sums = { repaired: 0, parked: 0, retried: 0 };
      try {
        const result = await drainUntilEmpty({
          drainer,
          db: ctx.db,
          timeoutMs: (opts.timeout ?? 3_600) * 1_000,
          giveUpAfter: opts.giveUpAfter ?? 5,
          onPass: (r) => {
            sums.repaired += r.repaired + r.deleted_downstream + r.forced;
            sums.parked += r.parked;
            sums.retried += r.retried;
            // Jobs that left the queue; the total grows if writes arrive while draining.
            done += r.claimed - r.retried - r.raised;
            progress?.update(done, sums);
          },
          onWait: (ms, reason) => progress?.note(`waiting ${(ms / 1000).toFixed(1)} s for the next due job (${reason})`),
        });
        return { mode: "until-empty", ...result };
      } finally {
        progress?.stop();
      }
    });
    const left = report.mode === "until-empty" ? leftover(report) : undefined;
    output(opts, left ? { ...report, exitCode: left.exitCode, message: left.message } : report, () => render(report));
    if (report.mode === "once") {
      if (report.error) throw new CommandFailedError(`drain pass failed: ${report.error}`);
      if (report.retried > 0) throw new CommandFailedError(`${report.retried} job(s) could not be confirmed and stay queued with a backoff (see \`tether parked list\` and last_error)`);
      return;
    }
    if (left) throw new CommandFailedError(left.message, left.exitCode);
  });
}
