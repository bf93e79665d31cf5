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
}

/** Builds a row from paired samples (sample i of both series was taken under the same conditions). */
export function compare(input: CompareInput): ResultRow {
  const spread = input.spread ?? "min-max";
  return {
    bench: input.bench,
    metric: input.metric,
    unit: input.unit,
    better: input.better,
    spread,
    tether: figure(input.tether, spread),
    baselineName: input.baselineName,
    baseline: figure(input.baseline, spread),
    ratio: figure(pairedRatios(input.tether, input.baseline), spread),
    ...(input.note ? { note: input.note } : {}),
  };
}

function num(x: number): string {
  if (!Number.isFinite(x)) return "n/a";
  const a = Math.abs(x);
  if (a >= 100_000) return `${(x / 1000).toFixed(0)}k`;
  if (a >= 10_000) return `${(x / 1000).toFixed(1)}k`;
  if (a >= 100) return x.toFixed(0);
  if (a >= 10) return x.toFixed(1);
  if (a >= 1) return x.toFixed(2);
  return x.toFixed(3);
}

const cell = (f: Figure, unit = "") => `${num(f.median)}${unit ? ` ${unit}` : ""} [${num(f.lo)}–${num(f.hi)}]`;

function pad(rows: string[][]): string {
  const widths = rows[0]!.map((_, c) => Math.max(...rows.map((r) => r[c]!.length)));
  return rows.map((r) => r.map((x, c) => x.padEnd(widths[c]!)).join("  ").trimEnd()).join("\n");
}

/** The printed table: figures are medians with [min–max] or [p25–p75] as stated per row. */
export function formatTable(rows: readonly ResultRow[]): string {
  const header = ["bench", "metric", "tether", "baseline", "baseline figure", "ratio tether/baseline", "spread", "n"];
  const body = rows.map((r) => [
    r.bench,
    r.metric,
    cell(r.tether, r.unit),
    r.baselineName,
    cell(r.baseline, r.unit),
    `${cell(r.ratio)} (${r.better} is better)`,
    r.spread,
    String(r.tether.n),
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
