import type { Command } from "commander";
import { captureSql, captureStatus, disableCapture, enableCapture, type CaptureOptions, type CaptureStatus } from "@tether/core";
import { intOption, output, pickCollection, withCommonOptions, withContext, type CommonOptions } from "../command-kit.js";

interface EnableOptions extends CommonOptions {
  tag?: string;
  priority?: number;
  graceMs?: number;
  sql?: boolean;
}

/** `--sql` prints the SQL; otherwise the status after the change. */
type CaptureCliResult = { collection: string; sql?: string } & Partial<CaptureStatus>;

/** One line per embedded table the collection's documents read, with its capture triggers. */
function embedLines(embeds: CaptureStatus["embeds"] | undefined): string[] {
  return (embeds ?? []).map((e) => `  embedded table ${e.table} (${e.embed}): ${e.enabled ? "enabled" : e.triggers.length > 0 ? "partial" : "disabled"}${e.triggers.length > 0 ? ` (triggers: ${e.triggers.join(", ")})` : ""}`);
}

interface DisableOptions extends CommonOptions {
  sql?: boolean;
}

/**
 * `tether capture enable|disable|status <collection>`: the opt-in trigger that captures writes
 * bypassing the writer (psql fixes, data migrations, other services) in their own transaction.
 */
export function registerCapture(program: Command): void {
  const capture = program
    .command("capture")
    .description("capture writes that bypass tether's writer with a trigger (version bump + job in the writing transaction)");

  withCommonOptions(
    capture
      .command("enable <collection>")
      .description("install (or replace) the capture triggers on the collection's table and on every table its documents embed")
      .option("--tag <tag>", 'tag of captured jobs (default "capture")')
      .option("--priority <n>", "priority of captured jobs; lower runs first (default 1, like live writes)", intOption(0, 1_000_000))
      .option("--grace-ms <ms>", "delay before a captured job is due (default 60000; 0 = due at once, drainers are woken)", intOption(0, 86_400_000))
      .option("--sql", "print the SQL for a migration file instead of running it"),
  ).action(async (name: string, opts: EnableOptions) => {
    const options: CaptureOptions = {
      ...(opts.tag !== undefined ? { tag: opts.tag } : {}),
      ...(opts.priority !== undefined ? { priority: opts.priority } : {}),
      ...(opts.graceMs !== undefined ? { graceMs: opts.graceMs } : {}),
    };
    // Adopting and capture change the table the config names: no schema check before them.
    const result = await withContext(opts, async (ctx) => {
      const collection = pickCollection(ctx, name);
      if (opts.sql) return { collection: collection.name, sql: captureSql(collection, options).enable } as CaptureCliResult;
      await enableCapture(ctx.db, collection, options);
      return { collection: collection.name, ...(await captureStatus(ctx.db, collection)) } as CaptureCliResult;
    }, { checkSchema: false });
    output(opts, result, () =>
      result.sql !== undefined ? result.sql : [`capture enabled on ${result.collection} (triggers: ${(result.triggers ?? []).join(", ")})`, ...embedLines(result.embeds)].join("\n"),
    );
  });

  withCommonOptions(
    capture
      .command("disable <collection>")
      .description("remove the capture triggers and their functions, the embedded tables' too")
      .option("--sql", "print the SQL for a migration file instead of running it"),
  ).action(async (name: string, opts: DisableOptions) => {
    const result = await withContext(opts, async (ctx) => {
      const collection = pickCollection(ctx, name);
      if (opts.sql) return { collection: collection.name, sql: captureSql(collection).disable } as CaptureCliResult;
      await disableCapture(ctx.db, collection);
      return { collection: collection.name, ...(await captureStatus(ctx.db, collection)) } as CaptureCliResult;
    }, { checkSchema: false });
    output(opts, result, () => (result.sql !== undefined ? result.sql : `capture disabled on ${result.collection}: no trigger left`));
  });

  withCommonOptions(capture.command("status [collection]").description("show which collections capture writes, and each embedded table's triggers")).action(
    async (name: string | undefined, opts: CommonOptions) => {
      const result = await withContext(opts, async (ctx) => {
        const targets = name === undefined ? ctx.collections : [pickCollection(ctx, name)];
        return Promise.all(targets.map(async (c) => ({ collection: c.name, ...(await captureStatus(ctx.db, c)) })));
      }, { checkSchema: false });
      output(opts, result, () =>
        result.flatMap((r) => [`${r.collection}: capture ${r.enabled ? "enabled" : r.triggers.length > 0 ? `partial (${r.triggers.join(", ")})` : "disabled"}`, ...embedLines(r.embeds)]).join("\n"),
      );
    },
  );
}
