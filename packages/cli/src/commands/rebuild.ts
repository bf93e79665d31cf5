import type { Command } from "commander";
import { discardRebuild, finishRebuild, rebuildIndex, rebuildStatus, rollbackRebuild, type RebuildProgress, type RebuildResult, type RebuildState } from "@tether/core";
import { UsageError } from "../cli-errors.js";
import { intOption, output, pickCollection, withCommonOptions, withContext, type CommonOptions } from "../command-kit.js";
import { ProgressReporter } from "../progress-reporter.js";

interface RebuildCliOptions extends CommonOptions {
  resume?: boolean;
  discard?: boolean;
  rollback?: boolean;
  finish?: boolean;
  status?: boolean;
  batchSize?: number;
  concurrency?: number;
}

type RebuildCliResult =
  | { status: RebuildState | null }
  | { discarded: RebuildState }
  | { finished: RebuildState }
  | { rolledBack: RebuildState & { repaired: number } }
  | { rebuilt: RebuildResult };

const PHASE: Record<RebuildProgress["phase"], string> = { loading: "loading rows", catching_up: "verifying (catch-up)", swapped: "swapped" };

/** `tether rebuild <collection>`: zero-downtime index rebuild, and its resume, discard, rollback and finish. */
export function registerRebuild(program: Command): void {
  withCommonOptions(
    program
      .command("rebuild")
      .description(
        "rebuild a collection's index with no downtime (a mapping change): load a new index while writes go on, verify it, swap the alias, keep the old index for --rollback until --finish",
      )
      .argument("<collection>", "the collection whose index to rebuild")
      .option("--resume", "continue an interrupted rebuild after its last loaded page")
      .option("--discard", "drop an interrupted rebuild (its half-built index); the live index was never touched")
      .option("--rollback", "point the alias back at the index kept by the last rebuild (brought up to date first), and drop the rebuilt one")
      .option("--finish", "drop the index kept by the last rebuild for a rollback")
      .option("--status", "show the collection's rebuild, if any")
      .option("--batch-size <n>", "rows per bulk request (default 5000)", intOption(1, 100_000))
      .option("--concurrency <n>", "bulk requests in flight (default 4)", intOption(1, 64)),
  ).action(async (name: string, opts: RebuildCliOptions) => {
    const modes = (["resume", "discard", "rollback", "finish", "status"] as const).filter((m) => opts[m]);
    if (modes.length > 1) throw new UsageError(`--${modes.join(", --")}: give at most one`);
    const mode = modes[0] ?? "start";
    const result = await withContext(opts, async (ctx): Promise<RebuildCliResult> => {
      const collection = pickCollection(ctx, name);
      switch (mode) {
        case "status":
          return { status: (await rebuildStatus(ctx.db, collection)) ?? null };
        case "discard":
          return { discarded: await discardRebuild(ctx.db, ctx.sink, collection) };
        case "finish":
          return { finished: await finishRebuild(ctx.db, ctx.sink, collection) };
        case "rollback":
          return { rolledBack: await rollbackRebuild(ctx.db, ctx.sink, collection) };
        default: {
          const bar = !opts.json || process.stdout.isTTY === true
            ? new ProgressReporter({
                barFormat: `rebuilding ${collection.name} [{bar}] {value}/{total} | {phase}`,
                line: (v, t, p) => `rebuilding ${collection.name}: ${p.phase} ${v}/${t}`,
              })
            : undefined;
          let phase: string | undefined;
          try {
            const rebuilt = await rebuildIndex(ctx.db, ctx.sink, collection, {
              resume: mode === "resume",
              ...(opts.batchSize !== undefined ? { batchSize: opts.batchSize } : {}),
              ...(opts.concurrency !== undefined ? { concurrency: opts.concurrency } : {}),
              logger: ctx.logger,
              onProgress: (p) => {
                if (!bar) return;
                if (p.phase !== phase) {
                  if (phase !== undefined) bar.stop();
                  phase = p.phase;
                  bar.start(p.total, { phase: PHASE[p.phase] });
                }
                bar.update(p.done, { phase: PHASE[p.phase] });
              },
            });
            return { rebuilt };
          } finally {
            if (phase !== undefined) bar?.stop();
          }
        }
      }
    });
    output(opts, result, () => {
      if ("status" in result) {
        const s = result.status;
        if (!s) return `${name}: no rebuild`;
        return `${name}: ${s.phase} into ${s.target} (${s.rowsLoaded}/${s.rowsTotal} rows loaded, started ${s.startedAt.toISOString()})${s.previous ? `; previous index ${s.previous}` : ""}`;
      }
      if ("discarded" in result) return `${name}: discarded the rebuild into ${result.discarded.target}; ${result.discarded.alias} still serves what it served`;
      if ("finished" in result) return `${name}: dropped ${result.finished.previous ?? "nothing"}; ${result.finished.alias} serves ${result.finished.target}`;
      if ("rolledBack" in result) {
        const r = result.rolledBack;
        return `${name}: ${r.alias} serves ${r.previous} again (${r.repaired} write(s) caught up); dropped ${r.target}`;
      }
      const r = result.rebuilt;
      return [
        `${name}: ${r.alias} now serves ${r.index}${r.resumed ? " (resumed)" : ""}`,
        `  loaded ${r.rowsLoaded} row(s) in ${(r.loadMs / 1000).toFixed(2)} s; ${r.catchUpRounds} verify pass(es) in ${(r.catchUpMs / 1000).toFixed(2)} s repaired ${r.caughtUp}; swap ${Math.round(r.swapMs)} ms; ${r.jobsExpeditedAfterSwap} job(s) of writes made meanwhile due at once`,
        r.previous ? `  kept ${r.previous} for --rollback; drop it with --finish` : "  there was no index before: nothing kept",
      ].join("\n");
    });
  });
}
