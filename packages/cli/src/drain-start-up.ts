import { describeIndexReport, indexReadiness } from "@tether/core";
import type { CliContext } from "./cli-context.js";
import { CommandFailedError } from "./cli-errors.js";

/**
 * `tether drain`'s start-up check of each collection's index, inside the operator's bound: one
 * signal for all of it, fired at `boundMs` (the drain's `--deadline-ms`, or `--timeout` when that
 * is shorter), so a hanging engine cannot hold the verb past what was asked. A missing index or a
 * mapping that differs is logged with its fix (the drain runs on: such jobs stay queued); an
 * engine that does not answer within the bound fails the verb, naming the bound; one that
 * cannot be reached fails it as any verb does (`elasticsearch_unreachable`).
 */
export async function checkIndexesAtStartUp(ctx: CliContext, boundMs: number, bound: string): Promise<void> {
  const signal = AbortSignal.timeout(boundMs);
  let reports;
  try {
    // The signal is the bound; the request timeout only backs it up.
    reports = await indexReadiness(ctx.sink, ctx.collections, { call: { signal, timeoutMs: boundMs + 1_000, retries: 0 }, rethrow: true });
  } catch (err) {
    // Any other failure (connection refused, an error answer) reads as the engine's own error.
    if (!signal.aborted) throw err;
    throw new CommandFailedError(`the engine did not answer the start-up index check within the drain's bound (${bound}, ${boundMs} ms): ${err instanceof Error ? err.message : String(err)}`);
  }
  for (const r of reports) if (r.fix) ctx.logger.warn({ index: r.index, collection: r.collection, state: r.state, problems: r.problems, fix: r.fix }, describeIndexReport(r));
}
