import type { Kysely } from "kysely";
import { aheadSince, unsettledRestores, type UnsettledRestore } from "../store/version-floor-store.js";
import type { AlertStatus, ResolvedAlertThresholds } from "./alert-types.js";

/**
 * `restore_detected`: either side went back in time. It fires while a version floor check
 * (`checkVersionFloor`) that found an index holding versions at or above tether.version_seq is
 * not settled by a clean fast verify of that collection since, or when drain passes found more
 * than `restoreAheadMax` documents ahead of their rows (newer than the row, or another body at
 * its version) within `restoreAheadWindowMinutes`: the rows went back (Postgres restored from a
 * backup, recovered to a point in time, failed over to a lagging replica), or the index was
 * written behind tether's back.
 */

export interface RestoreFindings {
  /** Floor checks that raised the sequence, not yet settled by a clean fast verify. */
  unsettled: UnsettledRestore[];
  /** Documents found ahead of their rows within the window, per collection. */
  ahead: Map<string, number>;
}

export async function readRestoreFindings(db: Kysely<any>, t: ResolvedAlertThresholds, now: Date): Promise<RestoreFindings> {
  const since = new Date(now.getTime() - t.restoreAheadWindowMinutes * 60_000);
  const [unsettled, ahead] = await Promise.all([unsettledRestores(db), aheadSince(db, since)]);
  return { unsettled, ahead };
}

/** One line per finding, for the alert's message and `tether status`. */
export function describeRestore(f: RestoreFindings, windowMinutes: number): string[] {
  return [
    ...f.unsettled.map((r) =>
      r.side === "index"
        ? `${r.collection}: the index went back at ${r.at.toISOString()} (its highest version fell to v${r.engineHighest}: restored from a snapshot, alias moved, made again?); settled by the next clean fast verify`
        : `${r.collection}: the index held v${r.engineHighest} at ${r.at.toISOString()}, at or above the sequence's next v${r.sequenceNext}: Postgres went back (raised past it; settled by the next clean fast verify)`,
    ),
    ...[...f.ahead].map(([c, n]) => `${c}: ${n} document(s) found ahead of their rows in the last ${windowMinutes} min (rewritten from the rows)`),
  ];
}

export async function restoreAlert(db: Kysely<any>, t: ResolvedAlertThresholds, now: Date): Promise<AlertStatus> {
  const f = await readRestoreFindings(db, t, now);
  const ahead = [...f.ahead.values()].reduce((a, b) => a + b, 0);
  const lines = describeRestore(f, t.restoreAheadWindowMinutes);
  return {
    name: "restore_detected",
    firing: f.unsettled.length > 0 || ahead > t.restoreAheadMax,
    value: ahead,
    threshold: t.restoreAheadMax,
    message:
      `${f.unsettled.length} collection(s) where Postgres or the index went back in time (a version floor check), not yet settled by a clean fast verify; ` +
      `${ahead} document(s) found ahead of their rows in the last ${t.restoreAheadWindowMinutes} min (threshold ${t.restoreAheadMax})` +
      (lines.length > 0 ? `: ${lines.join("; ")}` : ""),
    check: [
      "Was Postgres restored from a backup, recovered to a point in time or failed over to a lagging replica? Writes acknowledged after the backup are gone from Postgres: the runbook's \"After restoring Postgres, a point-in-time recovery or a failover\" (docs/alerts-and-runbook.md).",
      "Was the index restored from a snapshot, its alias moved, or it deleted and made again? The runbook's \"After restoring the index from a snapshot\".",
      "Is the repair through? `tether status` (restore lines, queue), then `tether verify <collection>`: the alert clears when a fast verify finished clean after the restore and the window holds no more documents ahead.",
    ],
  };
}
