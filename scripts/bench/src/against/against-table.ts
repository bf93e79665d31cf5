import { cell, pad } from "../report.js";
import type { ComparisonResult } from "./release-comparison.js";

/** The printed comparison: one line per figure (a row's tether and baseline figures), flagged ones marked. */
export function formatAgainstTable(result: ComparisonResult, ref: string): string {
  const header = ["bench", "metric", "figure", "ours", ref, `ours ÷ ${ref}`, "n", "vs previous release"];
  const body = result.comparisons.map((c) => [
    c.bench,
    c.metric,
    c.figure,
    cell(c.ours, c.unit),
    cell(c.theirs, c.unit),
    `${cell(c.ratio)} (${c.better} is better)`,
    String(c.ratio.n),
    c.flag ?? "ok",
  ]);
  const flagged = result.comparisons.filter((c) => c.flag);
  const lines = [pad([header, ...body])];
  if (result.unmatched.length > 0) lines.push(`\nNot compared (printed by one side only, or not in every repetition):\n${result.unmatched.map((u) => `  ${u.key}: ${u.side}`).join("\n")}`);
  lines.push(
    flagged.length === 0
      ? `\nNo figure is more than 10% worse than ${ref}.`
      : `\n${flagged.length} figure(s) more than 10% worse than ${ref}:\n${flagged.map((c) => `  ${c.bench} / ${c.metric} (${c.figure}): ${c.flag}`).join("\n")}`,
  );
  return lines.join("\n");
}
