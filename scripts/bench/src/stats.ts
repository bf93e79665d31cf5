/** Order statistics over repeated measurements. */

export interface Figure {
  median: number;
  /** Lower end of the spread (min or p25, see the row's `spread`). */
  lo: number;
  /** Upper end of the spread (max or p75). */
  hi: number;
  /** How many measurements the figure summarises. */
  n: number;
}

export type Spread = "min-max" | "p25-p75";

/** Linear-interpolated quantile of an ascending array. */
export function quantile(sorted: readonly number[], q: number): number {
  if (sorted.length === 0) return Number.NaN;
  const pos = (sorted.length - 1) * q;
  const base = Math.floor(pos);
  const next = sorted[base + 1];
  const here = sorted[base]!;
  return next === undefined ? here : here + (next - here) * (pos - base);
}

export function figure(values: readonly number[], spread: Spread): Figure {
  const s = [...values].sort((a, b) => a - b);
  return {
    median: quantile(s, 0.5),
    lo: spread === "min-max" ? s[0] ?? Number.NaN : quantile(s, 0.25),
    hi: spread === "min-max" ? s[s.length - 1] ?? Number.NaN : quantile(s, 0.75),
    n: s.length,
  };
}

/** p50 and p99 of one series of latencies. */
export function percentiles(values: readonly number[]): { p50: number; p99: number } {
  const s = [...values].sort((a, b) => a - b);
  return { p50: quantile(s, 0.5), p99: quantile(s, 0.99) };
}

/** Element-wise a[i] / b[i] of two paired series (same repetition, same conditions). */
export function pairedRatios(a: readonly number[], b: readonly number[]): number[] {
  if (a.length !== b.length) throw new Error(`paired series differ in length: ${a.length} vs ${b.length}`);
  return a.map((x, i) => x / b[i]!);
}
