import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { figure, pairedRatios, type Figure, type Spread } from "./stats.js";

/** One line of the results table: a tether figure, its baseline from the same run, and their ratio. */
export interface ResultRow {
  bench: string;
  metric: string;
  unit: string;
  /** Which direction is good for this metric. */
  better: "higher" | "lower";
  spread: Spread;
  tether: Figure;
  baselineName: string;
  baseline: Figure;
  /** tether ÷ baseline, computed per repetition (paired), then summarised. */
  ratio: Figure;
  note?: string;
  /** The goal the ratio is gated on, if any. */
  goal?: Goal;
  /** "met", "missed", or why the figure is not gated (its control is off). */
  verdict?: string;
}

/** A goal on a row's median ratio: `≤ value` (lower is better) or `≥ value`. */
export interface Goal {
  op: "<=" | ">=";
  value: number;
}

/** How far a same-condition control may read from 1.0× before the figures it vouches for are not gated. */
export const CONTROL_TOLERANCE = 0.1;

const goalText = (g: Goal) => `${g.op === "<=" ? "≤" : "≥"} ${g.value}×`;

function verdictOf(ratio: Figure, goal: Goal): string {
  const met = goal.op === "<=" ? ratio.median <= goal.value : ratio.median >= goal.value;
  return `${goalText(goal)}: ${met ? "met" : "missed"}`;
}

/**
 * Marks `rows` as not gated when `control` (a row comparing the same condition with itself,
 * which should read 1.0×) is off by more than CONTROL_TOLERANCE: a figure whose control drifted
 * that much says more about the machine than about tether.
 */
export function gateOnControl(rows: ResultRow[], control: ResultRow): void {
  const off = Math.abs(control.ratio.median - 1);
  if (off <= CONTROL_TOLERANCE) return;
  for (const r of rows) {
    if (r === control || !r.goal) continue;
    r.verdict = `${goalText(r.goal)}: control off — figure not gated (control ${control.ratio.median.toFixed(2)}×)`;
  }
}

export interface CompareInput {
  bench: string;
  metric: string;
  unit: string;
  better: "higher" | "lower";
  spread?: Spread;
  tether: readonly number[];
  baselineName: string;
  baseline: readonly number[];
  note?: string;
  goal?: Goal;
}

/** Builds a row from paired samples (sample i of both series was taken under the same conditions). */
export function compare(input: CompareInput): ResultRow {
  const spread = input.spread ?? "min-max";
  const ratio = figure(pairedRatios(input.tether, input.baseline), spread);
  return {
    bench: input.bench,
    metric: input.metric,
    unit: input.unit,
    better: input.better,
    spread,
    tether: figure(input.tether, spread),
    baselineName: input.baselineName,
    baseline: figure(input.baseline, spread),
    ratio,
    ...(input.note ? { note: input.note } : {}),
    ...(input.goal ? { goal: input.goal, verdict: verdictOf(ratio, input.goal) } : {}),
  };
}

/** A figure's number as the tables print it (k above 10,000, three significant digits below 1). */
export function num(x: number): string {
  if (!Number.isFinite(x)) return "n/a";
  const a = Math.abs(x);
  if (a >= 100_000) return `${(x / 1000).toFixed(0)}k`;
  if (a >= 10_000) return `${(x / 1000).toFixed(1)}k`;
  if (a >= 100) return x.toFixed(0);
  if (a >= 10) return x.toFixed(1);
  if (a >= 1) return x.toFixed(2);
  return x.toFixed(3);
}

/** `median unit [lo–hi]`. */
export const cell = (f: Figure, unit = "") => `${num(f.median)}${unit ? ` ${unit}` : ""} [${num(f.lo)}–${num(f.hi)}]`;

/** Columns padded to their widest cell; the first row is the header. */
export function pad(rows: string[][]): string {
  const widths = rows[0]!.map((_, c) => Math.max(...rows.map((r) => r[c]!.length)));
  return rows.map((r) => r.map((x, c) => x.padEnd(widths[c]!)).join("  ").trimEnd()).join("\n");
}

/** The printed table: figures are medians with [min–max] or [p25–p75] as stated per row. */
export function formatTable(rows: readonly ResultRow[]): string {
  const header = ["bench", "metric", "tether", "baseline", "baseline figure", "ratio tether/baseline", "spread", "n", "goal"];
  const body = rows.map((r) => [
    r.bench,
    r.metric,
    cell(r.tether, r.unit),
    r.baselineName,
    cell(r.baseline, r.unit),
    `${cell(r.ratio)} (${r.better} is better)`,
    r.spread,
    String(r.tether.n),
    r.verdict ?? "",
  ]);
  const notes = rows.filter((r) => r.note).map((r) => `  ${r.bench} / ${r.metric}: ${r.note}`);
  return pad([header, ...body]) + (notes.length ? `\n\nNotes:\n${notes.join("\n")}` : "");
}

export interface RunReport {
  startedAt: string;
  finishedAt: string;
  command: string;
  environment: Record<string, unknown>;
  benchmarks: { name: string; status: "ok" | "failed" | "unavailable"; durationMs: number; error?: string; info?: Record<string, unknown> }[];
  rows: ResultRow[];
}

/** Writes `<dir>/<timestamp>.json` and returns its path. */
export function writeReport(dir: string, report: RunReport): string {
  mkdirSync(dir, { recursive: true });
  const file = join(dir, `${report.startedAt.replace(/[:.]/g, "-")}.json`);
  writeFileSync(file, JSON.stringify(report, null, 2) + "\n");
  return file;
}
