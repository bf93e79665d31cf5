import type { Command } from "commander";
import { pauseName, resolveLaneName, resumeName, UnknownLaneError, ValidationError } from "@tether/core/internal";
import type { CliContext } from "../cli-context.js";
import { UsageError } from "../cli-errors.js";
import { output, withCommonOptions, withContext, type CommonOptions } from "../command-kit.js";

interface PauseOptions extends CommonOptions {
  reason?: string;
  force?: boolean;
}

/** The lane's job name by the one rule core defines; a usage error (exit 2) when unknown. */
function laneName(ctx: CliContext, raw: string, force: boolean | undefined): string {
  try {
    return resolveLaneName(ctx.collections, raw, { force: force === true });
  } catch (err) {
    if (err instanceof UnknownLaneError) throw new UsageError(`${err.message} (--force to pause another job name)`);
    if (err instanceof ValidationError) throw new UsageError("the lane name must be 1..200 characters");
    throw err;
  }
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
