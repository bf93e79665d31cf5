import type { Command } from "commander";
import { indexReadiness, queueStats, type GroupCounts, type IndexReport, type QueueStats } from "@tether/core";
import { output, table, withCommonOptions, withContext, type CommonOptions } from "../command-kit.js";
import { renderIndexReports } from "./migrate-indexes.js";

const COLUMNS = ["TOTAL", "DUE", "FUTURE", "EXPIRED", "PARKED", "DEAD-EXPIRED"];
const cells = (g: GroupCounts) => [g.total, g.due, g.future, g.expired, g.dead.parked, g.dead.expired];

function render(s: QueueStats & { indexes: IndexReport[] }): string {
  const lines = [
    `queue at ${s.at}: ${s.total} job(s): ${s.due} due, ${s.future} future, ${s.expiredInQueue} expired awaiting sweep`,
    `dead-letter: ${s.parked} parked, ${s.expiredDead} expired`,
    `oldest due job: ${s.oldestDueAgeSeconds === null ? "none due" : `${s.oldestDueAgeSeconds.toFixed(1)} s`}`,
    `paused lanes: ${s.paused.length === 0 ? "none" : s.paused.map((p) => `${p.name}${p.reason ? ` (${p.reason})` : ""}`).join(", ")}`,
  ];
  if (s.byName.length > 0) lines.push("", table(["NAME", ...COLUMNS], s.byName.map((g) => [g.name, ...cells(g)])));
  if (s.byTag.length > 0) lines.push("", table(["TAG", ...COLUMNS], s.byTag.map((g) => [g.tag, ...cells(g)])));
  if (s.byPriority.length > 0) lines.push("", table(["PRIORITY", ...COLUMNS], s.byPriority.map((g) => [g.priority, ...cells(g)])));
  if (s.indexes.length > 0) lines.push("", ...renderIndexReports(s.indexes));
  return lines.join("\n");
}

/** `tether status`: queue statistics (the same figures as GET /admin/queue). */
export function registerStatus(program: Command): void {
  withCommonOptions(program.command("status").description("show queue counts by name, tag and priority; due, future, expired, parked; oldest due age; paused lanes; each collection's index and whether its mapping is the declared one")).action(
    async (opts: CommonOptions) => {
      const stats = await withContext(opts, async (ctx) => {
        // The engine answering slowly must not hold up the queue's figures for long.
        const [queue, indexes] = await Promise.all([queueStats(ctx.db), indexReadiness(ctx.sink, ctx.collections, { call: { timeoutMs: 5_000 } })]);
        return { ...queue, indexes };
      });
      output(opts, stats, () => render(stats));
    },
  );
}
