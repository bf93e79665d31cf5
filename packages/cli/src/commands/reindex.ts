import type { Command } from "commander";
import { enqueueReindex, type ReindexRequest } from "@tether/core";
import { intOption, listOption, output, pickCollection, withCommonOptions, withContext, type CommonOptions } from "../command-kit.js";

interface ReindexOptions extends CommonOptions {
  scope: string;
  value?: string;
  from?: string;
  to?: string;
  ids?: string[];
  force?: boolean;
  priority?: number;
  tag?: string;
  collection?: string;
}

/** `tether reindex`: the admin re-index (one INSERT … SELECT), with the filters of POST /admin/reindex. */
export function registerReindex(program: Command): void {
  withCommonOptions(
    program
      .command("reindex")
      .description("enqueue a sync job for every entity in a scope (one INSERT … SELECT)")
      .requiredOption("--scope <scope>", 'a re-index scope the collection declares (see its reindexScopes) or "all"')
      .option("--value <value>", "the value of an equality scope (user, group)")
      .option("--from <iso>", "range scopes: lower bound, inclusive (ISO-8601; no offset means UTC)")
      .option("--to <iso>", "range scopes: upper bound, exclusive")
      .option("--ids <a,b,c>", "ids scope: comma-separated ids (repeatable)", listOption)
      .option("--force", "rewrite documents even when they look current (still verified)")
      .option("--priority <n>", "job priority; lower runs first (default 100 for equality scopes, 1000 otherwise; live is 1)", intOption(0, 1_000_000))
      .option("--tag <tag>", 'job tag; must start with "reindex" (default "reindex")')
      .option("--collection <name>", "collection to re-index when --config declares several"),
  ).action(async (opts: ReindexOptions) => {
    const req: ReindexRequest = {
      scope: opts.scope,
      ...(opts.value !== undefined ? { value: opts.value } : {}),
      ...(opts.from !== undefined ? { from: opts.from } : {}),
      ...(opts.to !== undefined ? { to: opts.to } : {}),
      ...(opts.ids !== undefined ? { ids: opts.ids } : {}),
      ...(opts.force ? { force: true } : {}),
      ...(opts.priority !== undefined ? { priority: opts.priority } : {}),
      ...(opts.tag !== undefined ? { tag: opts.tag } : {}),
    };
    const result = await withContext(opts, (ctx) => enqueueReindex(ctx.db, pickCollection(ctx, opts.collection), req));
    output(opts, result, () => `enqueued ${result.enqueued} job(s) at priority ${result.priority} with tag ${result.tag}`);
  });
}
