import { describeIndexReport, indexReadiness, type IndexReport } from "@tether/core";
import type { CliContext } from "../cli-context.js";

/**
 * The index half of `tether migrate`: each collection's index is created behind its alias with
 * the declared mapping when missing (no write path lets the engine create one), and an existing
 * index whose mapping lacks or contradicts declared fields is reported with its fix.
 */
export async function migrateIndexes(ctx: CliContext): Promise<IndexReport[]> {
  return indexReadiness(ctx.sink, ctx.collections, { create: true, call: { timeoutMs: 30_000 } });
}

/** The lines `tether migrate` and `tether status` print for the indexes. */
export function renderIndexReports(reports: readonly IndexReport[]): string[] {
  return reports.length === 0 ? [] : ["indexes:", ...reports.map((r) => `  ${describeIndexReport(r)}`)];
}

/** Whether any index could not be created or checked: the migration is not complete. */
export function unreachableIndexes(reports: readonly IndexReport[]): IndexReport[] {
  return reports.filter((r) => r.state === "unreachable");
}
