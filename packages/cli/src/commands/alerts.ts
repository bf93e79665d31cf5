import { InvalidArgumentError, type Command } from "commander";
import { evaluateAlerts, type AlertsReport, type AlertThresholds } from "@tether/core";
import { ALERT_NAMES, ALERT_SUMMARIES } from "@tether/core/internal";
import { CommandFailedError } from "../cli-errors.js";
import { output, table, withCommonOptions, withContext, type CommonOptions } from "../command-kit.js";

interface AlertsOptions extends CommonOptions {
  completionRateLow?: number;
  completionRateWindow?: number;
  expectTraffic?: boolean;
  queueLengthHigh?: number;
  queueLengthWindow?: number;
  expiredMax?: number;
  parkedMax?: number;
  oldestDueMax?: number;
}

function numberOption(raw: string): number {
  const n = Number(raw);
  if (raw.trim() === "" || !Number.isFinite(n) || n < 0) throw new InvalidArgumentError("must be a non-negative number");
  return n;
}

function render(r: AlertsReport): string {
  const rows = r.alerts.map((a) => [a.firing ? "FIRING" : "ok", a.name, a.value, a.threshold, a.message]);
  const lines = [table(["STATE", "ALERT", "VALUE", "THRESHOLD", "DETAIL"], rows)];
  for (const a of r.alerts.filter((x) => x.firing)) {
    lines.push("", `${a.name} — check first:`, ...a.check.map((c, i) => `  ${i + 1}. ${c}`));
  }
  lines.push("", r.firing ? `${r.alerts.filter((a) => a.firing).length} alert(s) firing at ${r.at.toISOString()}` : `no alert firing at ${r.at.toISOString()}`);
  return lines.join("\n");
}

/** The alerts `--help` lists, from core's one list of them (not a copy). */
export function alertsHelp(): string {
  const width = Math.max(...ALERT_NAMES.map((n) => n.length));
  return [
    "",
    `Alerts (${ALERT_NAMES.length}; thresholds from options.alerts in tether.config.ts, overridden by the flags above):`,
    ...ALERT_NAMES.map((n) => `  ${n.padEnd(width)}  ${ALERT_SUMMARIES[n]}`),
    "",
    "What each means and what to do: docs/alerts-and-runbook.md.",
  ].join("\n");
}

/**
 * `tether alerts`: evaluates the queue and verify alerts from Postgres (the same as the drainer's /alerts
 * and the API's /admin/alerts). Exits 1 while any alert fires, so it can gate scripts and cron.
 */
export function registerAlerts(program: Command): void {
  withCommonOptions(
    program
      .command("alerts")
      .description(`evaluate the ${ALERT_NAMES.length} alerts (${ALERT_NAMES.join(", ")}) from Postgres; exits 1 while any fires`)
      .addHelpText("after", alertsHelp())
      .option("--completion-rate-low <perMinute>", "low watermark of confirmed completions per minute (default 1)", numberOption)
      .option("--completion-rate-window <minutes>", "window of the completion rate (default 10)", numberOption)
      .option("--expect-traffic", "fire on a low completion rate even with nothing waiting (traffic never stops here)")
      .option("--queue-length-high <jobs>", "high watermark of the live queue (default 1000)", numberOption)
      .option("--queue-length-window <minutes>", "how long the live queue must stay above it (default 5)", numberOption)
      .option("--expired-max <jobs>", "expired jobs tolerated (default 0)", numberOption)
      .option("--parked-max <jobs>", "parked jobs tolerated (default 0)", numberOption)
      .option("--oldest-due-max <seconds>", "maximum age of the oldest due live job (default 600)", numberOption),
  ).action(async (opts: AlertsOptions) => {
    const flags: AlertThresholds = {
      ...(opts.completionRateLow !== undefined ? { completionRateLowPerMinute: opts.completionRateLow } : {}),
      ...(opts.completionRateWindow !== undefined ? { completionRateWindowMinutes: opts.completionRateWindow } : {}),
      ...(opts.expectTraffic ? { completionRateRequiresBacklog: false } : {}),
      ...(opts.queueLengthHigh !== undefined ? { queueLengthHigh: opts.queueLengthHigh } : {}),
      ...(opts.queueLengthWindow !== undefined ? { queueLengthWindowMinutes: opts.queueLengthWindow } : {}),
      ...(opts.expiredMax !== undefined ? { expiredMax: opts.expiredMax } : {}),
      ...(opts.parkedMax !== undefined ? { parkedMax: opts.parkedMax } : {}),
      ...(opts.oldestDueMax !== undefined ? { oldestDueJobMaxAgeSeconds: opts.oldestDueMax } : {}),
    };
    // Flags override the config's options.alerts, which override core's defaults.
    const report = await withContext(opts, (ctx) => evaluateAlerts(ctx.db, { ...ctx.options.alerts, ...flags }, { collections: ctx.collections.map((c) => c.name) }));
    output(opts, report, () => render(report));
    if (report.firing) {
      const names = report.alerts.filter((a) => a.firing).map((a) => a.name);
      throw new CommandFailedError(`${names.length} alert(s) firing: ${names.join(", ")}`);
    }
  });
}
