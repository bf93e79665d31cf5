import type { Command } from "commander";
import { SingleBar } from "cli-progress";
import { adoptCollection, type AdoptOptions, type AdoptPhase } from "@tether/core";
import { UsageError } from "../cli-errors.js";
import { intOption, output, pickCollection, withCommonOptions, withContext, type CommonOptions } from "../command-kit.js";

interface AdoptCliOptions extends CommonOptions {
  strategy?: string;
  addDeletedColumn?: boolean;
  capture?: boolean;
  graceMs?: number;
  enqueue: boolean;
  batchSize?: number;
  priority?: number;
  tag?: string;
  lockTimeoutMs?: number;
}

const PHASES: Record<AdoptPhase, string> = {
  version: "adding the version column",
  backfill: "backfilling versions",
  "not-null": "validating NOT NULL",
  "deleted-column": "adding the soft-delete column",
  capture: "installing the capture trigger",
  enqueue: "enqueuing the initial sync",
};

/**
 * `tether adopt <collection>`: brings an existing table under tether without a long lock, then
 * enqueues its initial sync. Progress goes to stderr: a bar on a terminal, a line every few
 * seconds otherwise (CI logs, pipes).
 */
export function registerAdopt(program: Command): void {
  withCommonOptions(
    program
      .command("adopt <collection>")
      .description("add the version column to an existing table without a long lock and enqueue its initial sync (a low-priority re-index of every row)")
      .option("--strategy <s>", '"fast-default" (one catalog-only ADD COLUMN … DEFAULT 1, Postgres 11+; default) or "backfill" (nullable column, batched backfill, validated NOT NULL)')
      .option("--add-deleted-column", "also add the collection's soft-delete column (timestamptz) when missing")
      .option("--capture", "install the capture trigger before the initial sync, so writes that bypass tether are synced too")
      .option("--grace-ms <ms>", "with --capture: delay before a captured job is due (default 60000; 0 = due at once, drainers are woken)", intOption(0, 86_400_000))
      .option("--no-enqueue", "change the table only; enqueue no initial sync")
      .option("--batch-size <n>", "rows per backfill transaction and per enqueue statement (default 10000)", intOption(1, 1_000_000))
      .option("--priority <n>", "priority of the initial sync jobs (default 1000; live is 1)", intOption(0, 1_000_000))
      .option("--tag <tag>", 'tag of the initial sync jobs; must start with "reindex" (default "reindex-adopt")')
      .option("--lock-timeout-ms <ms>", "the longest a writer may queue behind one DDL statement before it retries (default 1000)", intOption(1, 600_000)),
  ).action(async (name: string, opts: AdoptCliOptions) => {
    if (opts.strategy !== undefined && opts.strategy !== "fast-default" && opts.strategy !== "backfill") {
      throw new UsageError(`--strategy must be "fast-default" or "backfill", got "${opts.strategy}"`);
    }
    if (opts.graceMs !== undefined && !opts.capture) throw new UsageError("--grace-ms applies to captured writes: add --capture");
    const showBar = !opts.json || process.stderr.isTTY === true;
    let bar: SingleBar | undefined;
    let phase: AdoptPhase | undefined;
    const options: AdoptOptions = {
      enqueue: opts.enqueue,
      ...(opts.strategy !== undefined ? { strategy: opts.strategy as "fast-default" | "backfill" } : {}),
      ...(opts.addDeletedColumn ? { addDeletedColumn: true } : {}),
      ...(opts.capture ? { capture: opts.graceMs !== undefined ? { graceMs: opts.graceMs } : true } : {}),
      ...(opts.batchSize !== undefined ? { batchSize: opts.batchSize } : {}),
      ...(opts.priority !== undefined ? { priority: opts.priority } : {}),
      ...(opts.tag !== undefined ? { tag: opts.tag } : {}),
      ...(opts.lockTimeoutMs !== undefined ? { lockTimeoutMs: opts.lockTimeoutMs } : {}),
      onProgress: (p) => {
        if (!showBar) return;
        if (p.phase !== phase) {
          bar?.stop();
          phase = p.phase;
          bar = new SingleBar({
            stream: process.stderr,
            format: `${PHASES[p.phase]} [{bar}] {value}/{total}`,
            noTTYOutput: true,
            notTTYSchedule: 2_000,
            hideCursor: false,
          });
          bar.start(p.total, p.done);
        } else {
          bar?.setTotal(p.total);
          bar?.update(p.done);
        }
      },
    };
    // Adopting and capture change the table the config names: no schema check before them.
    const result = await withContext(opts, async (ctx) => {
      try {
        return await adoptCollection(ctx.db, pickCollection(ctx, name), options);
      } finally {
        bar?.stop();
      }
    }, { checkSchema: false });
    output(opts, result, () =>
      [
        `adopted ${result.collection} in ${(result.durationMs / 1000).toFixed(1)} s:`,
        `  version column: ${result.version === "present" ? "already there" : result.version}${result.backfilled > 0 ? ` (${result.backfilled} rows backfilled)` : ""}`,
        ...(result.addedDeletedColumn ? ["  soft-delete column added"] : []),
        ...(result.capture ? ["  capture trigger installed"] : []),
        `  initial sync: ${result.enqueued} job(s) enqueued`,
        ...(result.lockRetries > 0 ? [`  ${result.lockRetries} DDL statement(s) retried after a lock timeout`] : []),
      ].join("\n"),
    );
  });
}
