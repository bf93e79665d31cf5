import type { Command } from "commander";
import { pauseName, resumeName } from "@tether/core/internal";
import type { CliContext } from "../cli-context.js";
import { UsageError } from "../cli-errors.js";
import { output, withCommonOptions, withContext, type CommonOptions } from "../command-kit.js";

interface PauseOptions extends CommonOptions {
  reason?: string;
  force?: boolean;
}

/**
 * The job name of a lane given as a job name (`sync_annotation`) or a collection name
 * (`annotation`). A name no configured collection handles is refused unless `force`: a typo
 * would otherwise pause nothing and report success.
 */
function laneName(ctx: CliContext, raw: string, force: boolean | undefined): string {
  const name = raw.trim();
  if (name.length === 0 || name.length > 200) throw new UsageError("the lane name must be 1..200 characters");
  const byJob = ctx.collections.find((c) => c.jobName === name);
  if (byJob) return byJob.jobName;
  const byCollection = ctx.collections.find((c) => c.name === name);
  if (byCollection) return byCollection.jobName;
  if (force) return name;
  const known = ctx.collections.map((c) => `${c.jobName} (${c.name})`).join(", ");
  throw new UsageError(`unknown lane "${name}"; configured: ${known} (--force to pause another job name)`);
}

/**
 * `tether pause <name> [--reason]`: drainers stop claiming the lane's jobs from their next pass,
 * without a restart. Jobs keep being enqueued and wait; nothing is dropped.
 */
export function registerPause(program: Command): void {
  withCommonOptions(
    program
      .command("pause <name>")
      .description("stop drainers from claiming a lane's jobs (job or collection name); takes effect at their next pass, no restart")
      .option("--reason <text>", "why, shown by `tether status`")
      .option("--force", "pause a job name no configured collection handles"),
  ).action(async (raw: string, opts: PauseOptions) => {
    if (opts.reason !== undefined && opts.reason.length > 500) throw new UsageError("--reason must be at most 500 characters");
    const result = await withContext(opts, async (ctx) => {
      const name = laneName(ctx, raw, opts.force);
      await pauseName(ctx.db, name, opts.reason);
      return { paused: name, reason: opts.reason ?? null };
    });
    output(opts, result, () => `paused lane ${result.paused}: drainers skip its jobs from their next pass; undo with \`tether resume ${result.paused}\``);
  });
}

/** `tether resume <name>`: drainers claim the lane's jobs again from their next pass. */
export function registerResume(program: Command): void {
  withCommonOptions(
    program
      .command("resume <name>")
      .description("let drainers claim a paused lane's jobs again (job or collection name); takes effect at their next pass")
      .option("--force", "resume a job name no configured collection handles"),
  ).action(async (raw: string, opts: PauseOptions) => {
    const result = await withContext(opts, async (ctx) => {
      const name = laneName(ctx, raw, opts.force);
      return { resumed: name, wasPaused: await resumeName(ctx.db, name) };
    });
    output(opts, result, () =>
      result.wasPaused ? `resumed lane ${result.resumed}: drainers claim its jobs from their next pass` : `lane ${result.resumed} was not paused; nothing to do`,
    );
  });
}
