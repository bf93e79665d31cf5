import type { Command } from "commander";
import { InvalidArgumentError } from "commander";
import { DEFAULT_TOMBSTONE_RETENTION_MS, purgeTombstones } from "@tether/core";
import { output, pickCollection, table, withCommonOptions, withContext, type CommonOptions } from "../command-kit.js";

interface PurgeOptions extends CommonOptions {
  olderThan?: number;
  dryRun?: boolean;
  collection?: string;
}

const UNITS: Record<string, number> = { ms: 1, s: 1_000, m: 60_000, h: 3_600_000, d: 86_400_000 };

/** "30d", "12h", "90m", "0s" → milliseconds. */
export function durationOption(raw: string): number {
  const m = /^(\d+)(ms|s|m|h|d)$/.exec(raw.trim());
  if (!m) throw new InvalidArgumentError(`expected a duration such as 30d, 12h, 90m or 0s, got "${raw}"`);
  return Number(m[1]) * UNITS[m[2]!]!;
}

/** `tether purge-tombstones`: removes tombstones past the retention (the drainer also does it hourly). */
export function registerPurgeTombstones(program: Command): void {
  withCommonOptions(
    program
      .command("purge-tombstones")
      .description("remove the tombstones of deleted entities older than the retention (default: the config's tombstones.retentionMs, else 30d)")
      .option("--older-than <duration>", "retention, e.g. 30d, 12h, 0s", durationOption)
      .option("--dry-run", "count what would be removed, remove nothing")
      .option("--collection <name>", "only this collection (default: every collection of the config)"),
  ).action(async (opts: PurgeOptions) => {
    const results = await withContext(opts, (ctx) => {
      const collections = opts.collection ? [pickCollection(ctx, opts.collection)] : ctx.collections;
      const retentionMs = opts.olderThan ?? ctx.options.tombstones?.retentionMs ?? DEFAULT_TOMBSTONE_RETENTION_MS;
      return purgeTombstones(ctx.sink, collections, { retentionMs, db: ctx.db, ...(opts.dryRun ? { dryRun: true } : {}) });
    });
    output(opts, { dryRun: opts.dryRun === true, results }, () =>
      table(
        ["collection", opts.dryRun ? "would purge" : "purged", "skipped (newer write)"],
        results.map((r) => [r.collection, opts.dryRun ? r.found : r.purged, r.skipped]),
      ),
    );
  });
}
