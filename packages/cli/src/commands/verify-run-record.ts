import { userInfo } from "node:os";
import type { Kysely } from "kysely";
import { cliStartedBy, createVerifyRun, failVerifyRun, finishVerifyRun, type VerifyMode, type VerifyRunOutcome } from "@tether/core/internal";

/** Who typed `tether verify` (`cli:<user>` in tether.verify_run.started_by). */
function typedBy(): string {
  try {
    return cliStartedBy(userInfo().username);
  } catch {
    return cliStartedBy("unknown");
  }
}

/**
 * Records a whole-collection run of `tether verify` in tether.verify_run, as the schedule and the
 * console record theirs: a completed one counts toward the schedule's interval and the overdue
 * alert, and shows in `tether status` and the console (trigger `cli`). A run that throws is
 * recorded as failed, and the error rethrown.
 *
 * @example
 * const report = await recordVerifyRun(db, "product", "fast", () => verifyCollection(db, sink, products), (r) => ({ ...r, documentsCompared: r.documentsCompared }));
 */
export async function recordVerifyRun<T>(
  db: Kysely<any>,
  collection: string,
  mode: VerifyMode,
  run: (runId: string) => Promise<T>,
  outcome: (report: T) => VerifyRunOutcome,
): Promise<T> {
  const row = await createVerifyRun(db, collection, typedBy(), mode);
  let report: T;
  try {
    report = await run(row.id);
  } catch (err) {
    await failVerifyRun(db, row.id, err instanceof Error ? err.message : String(err)).catch(() => undefined);
    throw err;
  }
  await finishVerifyRun(db, row.id, outcome(report));
  return report;
}
