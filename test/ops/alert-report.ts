import type { AlertName, AlertsReport, AlertStatus } from "@tether/core";

/** The status of one alert in a report (throws if it is missing). */
export function alertOf(report: AlertsReport, name: AlertName): AlertStatus {
  const a = report.alerts.find((x) => x.name === name);
  if (!a) throw new Error(`alert ${name} missing from the report`);
  return a;
}

/** `now` shifted by `ms`, to pin the clock of evaluateAlerts and the drainer. */
export const later = (now: Date, ms: number) => new Date(now.getTime() + ms);
