import type { Command } from "commander";
import { checkConfigSchema, indexReadiness, queueStats, type ConfigWarning, type FanoutInProgress, type GroupCounts, type IndexReport, type QueueStats } from "@tether/core";
import {
  databaseNow,
  describeRestore,
  readRestoreFindings,
  resolveAlertThresholds,
  verifyKeyReadiness,
  verifyRunSummaries,
  type VerifyKeyWarning,
  type VerifyRunSummary,
} from "@tether/core/internal";
import { output, table, withCommonOptions, withContext, type CommonOptions } from "../command-kit.js";
import { configWarningLines } from "./config-warnings.js";
import { indexFailure, renderIndexReports } from "./migrate-indexes.js";
import { CommandFailedError } from "../cli-errors.js";
import { verifyKeyLines } from "./verify-key-lines.js";

const COLUMNS = ["TOTAL", "DUE", "FUTURE", "EXPIRED", "PARKED", "DEAD-EXPIRED"];
const cells = (g: GroupCounts) => [g.total, g.due, g.future, g.expired, g.dead.parked, g.dead.expired];
const seconds = (s: number | null) => (s === null ? "none due" : `${s.toFixed(1)} s`);
const progress = (f: FanoutInProgress) => `${f.done}/${f.total ?? "?"}`;

const verifyRow = (v: VerifyRunSummary) => [
  v.collection,
  v.mode,
  v.lastDone ? v.lastDone.finishedAt.toISOString() : "never",
  v.lastDone ? v.lastDone.trigger : "-",
  v.lastDone ? String(v.lastDone.documentsCompared) : "-",
  v.lastDone ? (v.lastDone.driftedTotal === 0 ? "none" : Object.entries(v.lastDone.drifted).filter(([, n]) => n > 0).map(([k, n]) => `${k} ${n}`).join(", ")) : "-",
  v.running ? `${v.running.documentsCompared}/${v.running.documentsTotal}` : "-",
];

function render(s: QueueStats & { indexes: IndexReport[]; warnings: ConfigWarning[]; verify: VerifyRunSummary[]; verifyKeys: VerifyKeyWarning[]; restore: string[] }): string {
  const lines = [
    `queue at ${s.at}: ${s.total} job(s): ${s.due} due, ${s.future} future, ${s.expiredInQueue} expired awaiting sweep`,
    `dead-letter: ${s.parked} parked, ${s.expiredDead} expired`,
    `live work: ${s.liveLength} job(s), oldest due ${seconds(s.oldestDueAgeSeconds)}`,
    `fan-out work: ${s.fanoutLength} job(s), oldest due ${seconds(s.fanoutOldestDueAgeSeconds)}`,
    `paused lanes: ${s.paused.length === 0 ? "none" : s.paused.map((p) => `${p.name}${p.reason ? ` (${p.reason})` : ""}`).join(", ")}`,
  ];
  if (s.fanouts.length > 0) {
    lines.push(
      "",
      `fan-outs in progress${s.fanouts.length >= 100 ? " (the first 100)" : ""}:`,
      table(
        ["COLLECTION", "EMBED", "LINK", "DONE/TOTAL", "STATE", "ATTEMPTS", "AGE", "LAST ERROR"],
        s.fanouts.map((f) => [f.collection, f.embed, f.link, progress(f), f.state, f.attempts, `${f.ageSeconds.toFixed(1)} s`, (f.lastError ?? "-").slice(0, 120)]),
      ),
    );
  }
  if (s.byName.length > 0) lines.push("", table(["NAME", ...COLUMNS], s.byName.map((g) => [g.name, ...cells(g)])));
  if (s.byTag.length > 0) lines.push("", table(["TAG", ...COLUMNS], s.byTag.map((g) => [g.tag, ...cells(g)])));
  if (s.byPriority.length > 0) lines.push("", table(["PRIORITY", ...COLUMNS], s.byPriority.map((g) => [g.priority, ...cells(g)])));
  if (s.verify.length > 0) lines.push("", "verify (last completed run, run in progress):", table(["COLLECTION", "MODE", "COMPLETED", "BY", "COMPARED", "DRIFT", "RUNNING"], s.verify.map(verifyRow)));
  lines.push(...verifyKeyLines(s.verifyKeys));
  if (s.restore.length > 0) lines.push("", "either side went back in time (restore_detected; docs/alerts-and-runbook.md#restore_detected):", ...s.restore.map((l) => `  ${l}`));
  if (s.indexes.length > 0) lines.push("", ...renderIndexReports(s.indexes));
  if (s.warnings.length > 0) lines.push("", ...configWarningLines(s.warnings));
  return lines.join("\n");
}

/** `tether status`: queue statistics (the same figures as GET /admin/queue), fan-outs in progress, indexes, config warnings. */
export function registerStatus(program: Command): void {
  withCommonOptions(
    program
      .command("status")
      .description(
        "show queue counts by name, tag and priority; due, future, expired, parked; live and fan-out work with their oldest due age; fan-outs in progress (done / total); paused lanes; each collection's index and whether its mapping is the declared one; each collection's last verify run (drift found) and the one in progress",
      ),
  ).action(async (opts: CommonOptions) => {
    const stats = await withContext(
      opts,
      async (ctx) => {
        const warnings: ConfigWarning[] = [];
        await checkConfigSchema(ctx.db, ctx.config, { onWarning: (w) => warnings.push(w) });
        // The engine answering slowly must not hold up the queue's figures for long.
        const thresholds = resolveAlertThresholds(ctx.options.alerts);
        const [queue, indexes, verify, verifyKeys, restore] = await Promise.all([
          queueStats(ctx.db),
          indexReadiness(ctx.sink, ctx.collections, { call: { timeoutMs: 5_000 } }),
          verifyRunSummaries(ctx.db),
          verifyKeyReadiness(ctx.db, ctx.sink, ctx.collections, { timeoutMs: 5_000, retries: 0 }),
          databaseNow(ctx.db).then((now) => readRestoreFindings(ctx.db, thresholds, now)),
        ]);
        // An index the engine did not answer for, or refused to show: status exits 1 (the README's table).
        const error = indexFailure(indexes, "checked", "run `tether status` again");
        return { ...queue, indexes, warnings, verify, verifyKeys, restore: describeRestore(restore, thresholds.restoreAheadWindowMinutes), ...(error ? { error } : {}) };
      },
      { checkSchema: false },
    );
    output(opts, stats, () => render(stats));
    if (stats.error) throw new CommandFailedError(stats.error.message);
  });
}
