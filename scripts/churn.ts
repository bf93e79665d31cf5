/**
 * Churn: the API (direct sync on) and two drainers under creates, edits and soft deletes paced
 * at 70% of the maximum write rate measured first, for 30 minutes by default, on a Postgres of
 * its own with autovacuum at its defaults. Prints minute 1 against the last minute: claim p99,
 * createWithJob p99, tether.job heap and index size, dead tuples (goal: each ≤ 1.2×).
 *
 *   scripts/churn [--minutes 30] [--rate-fraction 0.7] [--probe-seconds 20] [--sample-seconds 60] [--json]
 *
 * Takes `--minutes` plus the probe (20 s) and about 10 s of set-up: about 31 minutes by default.
 */
import { churnMain } from "./long-runs/src/churn-main.js";

process.exitCode = await churnMain(process.argv.slice(2));
