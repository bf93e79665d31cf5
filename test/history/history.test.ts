import { writeFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { providedServices } from "@tether/testkit";
import { describeFailure, runHistories } from "./history-runner.js";

// Fixed unless overridden, so CI is reproducible; a failure prints the seed and path to replay it.
const SEED = Number(process.env.TETHER_HISTORY_SEED ?? 22_2026);
const PATH = process.env.TETHER_HISTORY_PATH || undefined;
// With a path: which commands of the shrunk history ran (printed with a divergence, as is the history's command limit).
const REPLAY_PATH = process.env.TETHER_HISTORY_REPLAY_PATH || undefined;
const MAX_COMMANDS = Number(process.env.TETHER_HISTORY_MAX_COMMANDS ?? 30);
// The budget is operations, not time: about 60-90 s on a small machine for the default.
const OPERATIONS = Number(process.env.TETHER_HISTORY_OPERATIONS ?? 60);
// Text ids from the whole alphabet the id rule syncs (TETHER_HISTORY_WIDE_IDS=0 narrows it).
const WIDE_IDS = process.env.TETHER_HISTORY_WIDE_IDS !== "0";
const SKIP_VERSION_CHECK = process.env.TETHER_HISTORY_SKIP_VERSION_CHECK === "1";
const MAX_SHRINKS = Number(process.env.TETHER_HISTORY_MAX_SHRINKS ?? 60);
// scripts/history-mutants reads the outcome from this file (JSON), not from the test's output.
const REPORT = process.env.TETHER_HISTORY_REPORT || undefined;

// Runs once per sink (the vitest projects).
describe("randomized histories of writes, plain SQL, faults, drainers and operator verbs", () => {
  it(
    "end, after tether drain --until-empty, with every document equal to its row and both verify modes at zero drift",
    async () => {
      const targets = providedServices();
      const sink = targets.sink;
      const result = await runHistories({
        targets,
        seed: SEED,
        ...(PATH ? { path: PATH } : {}),
        ...(REPLAY_PATH ? { replayPath: REPLAY_PATH } : {}),
        operations: OPERATIONS,
        maxCommands: MAX_COMMANDS,
        wideIds: WIDE_IDS,
        skipVersionCheck: SKIP_VERSION_CHECK,
        maxShrinks: MAX_SHRINKS,
        log: (line) => console.log(`[history ${sink}] ${line}`),
      });
      console.log(`[history ${sink}] seed ${result.seed}: ${result.histories} histories, ${result.operations} operations${result.failure ? ", 1 divergence" : ", no divergence"}`);
      if (REPORT) writeFileSync(REPORT, JSON.stringify({ sink, ...result }));
      expect(result.failure && describeFailure(result.failure)).toBeUndefined();
      expect(result.operations).toBeGreaterThanOrEqual(PATH ? 1 : OPERATIONS);
    },
    // Not a limit on the work (that is counted in operations): a guard against a hung history.
    1_800_000,
  );
});
