import { describeIndexReport, indexReadiness, type IndexReport } from "@tether/core";
import type { CliContext } from "../cli-context.js";
import { EXIT_FAILURE } from "../cli-errors.js";
import type { CliErrorReport } from "../describe-cli-error.js";

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

/** The indexes that could not be created or checked (the engine did not answer, or refused a privilege). */
export function unreachableIndexes(reports: readonly IndexReport[]): IndexReport[] {
  return reports.filter((r) => r.state === "unreachable" || r.state === "forbidden");
}

/**
 * What `tether migrate` and `tether status` report (in their JSON document, `error`, and on
 * stderr) when an index could not be created or checked: a refused privilege is `forbidden`
 * with the privilege and the index (the role is the fix), anything else the engine unreachable.
 * `verb` says what could not be done ("created or checked", "checked"); `then`, what to run after.
 */
export function indexFailure(reports: readonly IndexReport[], what: string, then: string): CliErrorReport | undefined {
  const failed = unreachableIndexes(reports);
  if (failed.length === 0) return undefined;
  const forbidden = failed.find((r) => r.state === "forbidden");
  const why = failed.map((r) => `${r.collection} (index ${r.index}): ${r.error}`).join("; ");
  const fix = forbidden ? `grant the privilege, then ${then}` : `${then} once the engine answers`;
  const message = `${failed.length} index(es) could not be ${what}: ${why}; ${fix}`;
  if (!forbidden) return { code: "elasticsearch_unreachable", message, exitCode: EXIT_FAILURE };
  return { code: "forbidden", message, exitCode: EXIT_FAILURE, ...(forbidden.privilege ? { privilege: forbidden.privilege } : {}), index: forbidden.refusedIndex ?? forbidden.index };
}
