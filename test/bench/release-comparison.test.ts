import { describe, expect, it } from "vitest";
import { compareReleases, isWorse } from "../../scripts/bench/src/against/release-comparison.js";
import { formatAgainstTable } from "../../scripts/bench/src/against/against-table.js";
import { compare, type ResultRow } from "../../scripts/bench/src/report.js";

/** One repetition's row as a `--reps 1` process prints it: one sample on each side. */
const row = (metric: string, better: "higher" | "lower", tether: number, baseline: number): ResultRow =>
  compare({ bench: "load", metric, unit: "x", better, tether: [tether], baselineName: "pg only", baseline: [baseline] });

describe("pnpm bench --against: each figure against the same figure at the ref", () => {
  it("pairs repetition i of ours with repetition i of the ref and summarises the ratios, not the two medians", () => {
    // Ours 100, 200, 400 against 200, 200, 200: ratios 0.5, 1, 2 (median 1); the medians' ratio would be 1 too,
    // so the pairing shows in the spread, which only per-repetition ratios give.
    const ours = [[row("writes/s", "higher", 100, 10)], [row("writes/s", "higher", 200, 10)], [row("writes/s", "higher", 400, 10)]];
    const theirs = [[row("writes/s", "higher", 200, 10)], [row("writes/s", "higher", 200, 10)], [row("writes/s", "higher", 200, 10)]];
    const { comparisons } = compareReleases(ours, theirs, "abc1234");
    const tether = comparisons.find((c) => c.figure === "tether")!;
    expect(tether.ratio).toEqual({ median: 1, lo: 0.5, hi: 2, n: 3 });
    expect(tether.ours.median).toBe(200);
    expect(tether.theirs.median).toBe(200);
    expect(tether.flag).toBeUndefined();
  });

  it("compares a row's baseline figure too, under its own name", () => {
    const { comparisons } = compareReleases([[row("writes/s", "higher", 100, 50)]], [[row("writes/s", "higher", 100, 100)]], "abc1234");
    expect(comparisons.map((c) => [c.figure, c.ratio.median])).toEqual([
      ["tether", 1],
      ["baseline: pg only", 0.5],
    ]);
    expect(comparisons[1]!.flag).toBe("WORSE: 50% below abc1234");
  });

  it("flags a higher-is-better figure below 0.9× the ref and a lower-is-better figure above 1.1×, and nothing within 10%", () => {
    const ours = [[row("writes/s", "higher", 89, 1), row("p99", "lower", 111, 1), row("writes/s ok", "higher", 91, 1), row("p99 ok", "lower", 109, 1)]];
    const theirs = [[row("writes/s", "higher", 100, 1), row("p99", "lower", 100, 1), row("writes/s ok", "higher", 100, 1), row("p99 ok", "lower", 100, 1)]];
    const flags = Object.fromEntries(
      compareReleases(ours, theirs, "ref")
        .comparisons.filter((c) => c.figure === "tether")
        .map((c) => [c.metric, c.flag ?? "none"]),
    );
    expect(flags).toEqual({ "writes/s": "WORSE: 11% below ref", p99: "WORSE: 11% above ref", "writes/s ok": "none", "p99 ok": "none" });
  });

  it("never flags a figure that is better than the ref, however much", () => {
    expect(isWorse(3, "higher")).toBe(false);
    expect(isWorse(0.2, "lower")).toBe(false);
  });

  it("flags on the median of the paired ratios, so one bad repetition out of three is not flagged", () => {
    const ours = [[row("writes/s", "higher", 50, 1)], [row("writes/s", "higher", 98, 1)], [row("writes/s", "higher", 101, 1)]];
    const theirs = [[row("writes/s", "higher", 100, 1)], [row("writes/s", "higher", 100, 1)], [row("writes/s", "higher", 100, 1)]];
    const tether = compareReleases(ours, theirs, "ref").comparisons[0]!;
    expect(tether.ratio.median).toBeCloseTo(0.98);
    expect(tether.flag).toBeUndefined();
  });

  it("does not flag a figure whose ratio means nothing (a zero or a missing figure on a side)", () => {
    const { comparisons } = compareReleases([[row("errors", "lower", 0, 1)]], [[row("errors", "lower", 0, 1)]], "ref");
    expect(comparisons[0]!.flag).toBeUndefined();
  });

  it("lists apart, and does not compare, a row one side printed only, or not in every repetition", () => {
    const ours = [[row("a", "higher", 1, 1), row("new", "higher", 1, 1), row("flaky", "higher", 1, 1)], [row("a", "higher", 1, 1)]];
    const theirs = [
      [row("a", "higher", 1, 1), row("old", "higher", 1, 1), row("flaky", "higher", 1, 1)],
      [row("a", "higher", 1, 1), row("old", "higher", 1, 1), row("flaky", "higher", 1, 1)],
    ];
    const { comparisons, unmatched } = compareReleases(ours, theirs, "ref");
    expect(comparisons.map((c) => c.metric)).toEqual(["a", "a"]);
    expect(unmatched).toEqual([
      { key: "load / new", side: "ours" },
      { key: "load / flaky", side: "both, not every repetition" },
      { key: "load / old", side: "theirs" },
    ]);
  });

  it("refuses series of different lengths: a repetition lost on one side must be dropped from both", () => {
    expect(() => compareReleases([[row("a", "higher", 1, 1)]], [], "ref")).toThrow(/paired repetitions differ/);
  });

  it("prints each figure with its ratio and the flag in the vs previous release column, and lists the flagged ones at the end", () => {
    const table = formatAgainstTable(compareReleases([[row("writes/s", "higher", 80, 100)]], [[row("writes/s", "higher", 100, 100)]], "89760f0"), "89760f0");
    expect(table).toMatch(/vs previous release/);
    expect(table).toMatch(/writes\/s\s+tether\s+80\.0 x \[80\.0–80\.0\]\s+100 x \[100–100\]\s+0\.800 \[0\.800–0\.800\] \(higher is better\)\s+1\s+WORSE: 20% below 89760f0/);
    expect(table).toMatch(/1 figure\(s\) more than 10% worse than 89760f0:\n {2}load \/ writes\/s \(tether\): WORSE: 20% below 89760f0/);
  });
});
