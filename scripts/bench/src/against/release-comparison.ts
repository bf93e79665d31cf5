/**
 * `pnpm bench … --against <ref>`: each figure of this tree against the same figure measured on
 * the ref in the same run. Pure: the runs are taken elsewhere (against-run.ts); this pairs them.
 *
 * | input                                                  | output                                       |
 * | ------------------------------------------------------ | -------------------------------------------- |
 * | repetition i ran ours, then the ref (one process each)  | ratio_i = ours_i ÷ ref_i (paired), then median |
 * | a row's tether figure and its baseline figure           | two comparisons: both are figures of the run  |
 * | `better: higher` and median ratio < 0.9                 | flagged: more than 10% worse than the ref     |
 * | `better: lower` and median ratio > 1.1                  | flagged: more than 10% worse than the ref     |
 * | a row one side did not print in some repetition         | listed apart, not compared                     |
 * | a figure that is 0, negative or not finite on a side    | not flagged (no meaningful ratio)              |
 */
import type { ResultRow } from "../report.js";
import { figure, type Figure } from "../stats.js";

/** How much worse than the ref a figure may be before it is flagged. */
export const AGAINST_TOLERANCE = 0.1;

/** One repetition's rows from one side (one benchmark process run with `--reps 1`). */
export type RepetitionRows = readonly ResultRow[];

export interface ReleaseComparison {
  bench: string;
  metric: string;
  /** "tether", or "baseline: <its name>" for the row's baseline figure. */
  figure: string;
  unit: string;
  better: "higher" | "lower";
  ours: Figure;
  theirs: Figure;
  /** ours ÷ theirs, per repetition (paired), summarised as median [min–max]. */
  ratio: Figure;
  /** Set when the median ratio is more than AGAINST_TOLERANCE worse than the ref. */
  flag?: string;
}

export interface ComparisonResult {
  comparisons: ReleaseComparison[];
  /** Rows printed by one side only (or not in every repetition), by `bench / metric`. */
  unmatched: { key: string; side: "ours" | "theirs" | "both, not every repetition" }[];
}

const keyOf = (r: Pick<ResultRow, "bench" | "metric">) => `${r.bench} / ${r.metric}`;

/** Whether a median ratio of ours ÷ theirs is more than `tolerance` worse, in the row's direction. */
export function isWorse(ratio: number, better: "higher" | "lower", tolerance = AGAINST_TOLERANCE): boolean {
  if (!Number.isFinite(ratio) || ratio <= 0) return false;
  return better === "higher" ? ratio < 1 - tolerance : ratio > 1 + tolerance;
}

/** The flag's text: how much worse, in the row's own terms. */
export function flagText(ratio: number, better: "higher" | "lower", ref: string): string {
  const pct = better === "higher" ? (1 - ratio) * 100 : (ratio - 1) * 100;
  return `WORSE: ${pct.toFixed(0)}% ${better === "higher" ? "below" : "above"} ${ref}`;
}

function byKey(rows: RepetitionRows): Map<string, ResultRow> {
  const m = new Map<string, ResultRow>();
  for (const r of rows) m.set(keyOf(r), r);
  return m;
}

/**
 * Pairs repetition i of ours with repetition i of theirs. `ours.length` must equal
 * `theirs.length` (a repetition that failed on either side is dropped from both by the caller).
 * Rows keep the order ours printed them in.
 */
export function compareReleases(ours: readonly RepetitionRows[], theirs: readonly RepetitionRows[], ref: string, tolerance = AGAINST_TOLERANCE): ComparisonResult {
  if (ours.length !== theirs.length) throw new Error(`paired repetitions differ in number: ${ours.length} ours vs ${theirs.length} at ${ref}`);
  const oursByRep = ours.map(byKey);
  const theirsByRep = theirs.map(byKey);
  const keys: string[] = [];
  const seen = new Set<string>();
  for (const rows of [...ours, ...theirs]) {
    for (const r of rows) {
      const k = keyOf(r);
      if (!seen.has(k)) {
        seen.add(k);
        keys.push(k);
      }
    }
  }
  const comparisons: ReleaseComparison[] = [];
  const unmatched: ComparisonResult["unmatched"] = [];
  for (const k of keys) {
    const o = oursByRep.map((m) => m.get(k));
    const t = theirsByRep.map((m) => m.get(k));
    const inOurs = o.some(Boolean);
    const inTheirs = t.some(Boolean);
    if (!inOurs || !inTheirs) {
      unmatched.push({ key: k, side: inOurs ? "ours" : "theirs" });
      continue;
    }
    if (o.some((r) => !r) || t.some((r) => !r)) {
      unmatched.push({ key: k, side: "both, not every repetition" });
      continue;
    }
    const oRows = o as ResultRow[];
    const tRows = t as ResultRow[];
    const first = oRows[0]!;
    const sides: { figure: string; pick: (r: ResultRow) => number }[] = [
      { figure: "tether", pick: (r) => r.tether.median },
      { figure: `baseline: ${first.baselineName}`, pick: (r) => r.baseline.median },
    ];
    for (const side of sides) {
      const ov = oRows.map(side.pick);
      const tv = tRows.map(side.pick);
      const ratio = figure(
        ov.map((x, i) => x / tv[i]!),
        "min-max",
      );
      const c: ReleaseComparison = {
        bench: first.bench,
        metric: first.metric,
        figure: side.figure,
        unit: first.unit,
        better: first.better,
        ours: figure(ov, "min-max"),
        theirs: figure(tv, "min-max"),
        ratio,
      };
      if (isWorse(ratio.median, first.better, tolerance)) c.flag = flagText(ratio.median, first.better, ref);
      comparisons.push(c);
    }
  }
  return { comparisons, unmatched };
}
