/**
 * The history tester proves its power: each named mutant (a bug seeded on purpose, see
 * scripts/long-runs/src/history-mutants.ts) is applied to a scratch copy of the checked-out
 * commit, and the history test runs there at CI's budget (no shrinking), on each engine. One
 * line per mutant and engine: caught or not, after how many operations. See
 * docs/history-tester.md.
 *
 *   scripts/history-mutants [--sink elasticsearch|opensearch|both] [--mutant NAME]... [--operations N] [--no-baseline] [--keep]
 *
 * Exit 1 when a mutant survives on an engine, or when the unpatched copy (the baseline, run
 * first) diverges.
 */
import { fileURLToPath } from "node:url";
import { historyMutantsMain } from "./long-runs/src/history-mutants-main.js";

process.exitCode = await historyMutantsMain(process.argv.slice(2), fileURLToPath(new URL("..", import.meta.url)));
