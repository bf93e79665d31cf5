import { ValidationError } from "./errors.js";

// A date, or a date-time with an optional offset. `Date.parse` alone accepts "1" or "May 3",
// and reads 2024-02-30 as March 1: every component is checked here instead.
const ISO_8601 = /^(\d{4})-(\d{2})-(\d{2})(?:[T ](\d{2}):(\d{2})(?::(\d{2})(?:\.(\d{1,9}))?)?(Z|[+-]\d{2}:?\d{2})?)?$/i;

const utc = (year: number, month: number, day: number, h = 0, m = 0, s = 0, ms = 0): number => {
  const d = new Date(0);
  // setUTCFullYear, unlike Date.UTC, does not map years 0..99 onto 1900..1999.
  d.setUTCFullYear(year, month - 1, day);
  d.setUTCHours(h, m, s, ms);
  return d.getTime();
};

/**
 * Earliest and latest instants a bound may name. Postgres's timestamptz reaches 4713 BC and
 * 294276 AD, but ISO-8601 year 0000 is 1 BC (which Postgres reads as out of range) and years
 * past 9999 need an expanded format: 0001-01-01 … 9999-12-31 UTC keeps every accepted bound
 * inside what Postgres, JavaScript and JSON clients all read the same way.
 */
export const TIMESTAMP_MIN = new Date(utc(1, 1, 1));
export const TIMESTAMP_MAX = new Date(utc(9999, 12, 31, 23, 59, 59, 999));

const isLeap = (y: number) => (y % 4 === 0 && y % 100 !== 0) || y % 400 === 0;
const DAYS = [31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31];

/**
 * Parses an ISO-8601 date or date-time bound of a range filter into an instant, or throws a
 * `ValidationError` naming `field`. A real calendar date (no February 30th, no hour 24), a
 * date-time without an offset is read as UTC (never the server's zone), and the instant lies in
 * `TIMESTAMP_MIN`..`TIMESTAMP_MAX`.
 *
 * @example
 * parseTimestampBound("from", "2026-01-31");                 // 2026-01-31T00:00:00.000Z
 * parseTimestampBound("to", "2026-01-31T10:00:00+02:00");    // 2026-01-31T08:00:00.000Z
 * parseTimestampBound("from", "2024-02-30");                 // throws: from: 2024-02-30 is not a calendar date
 */
export function parseTimestampBound(field: string, v: unknown): Date {
  const m = typeof v === "string" ? ISO_8601.exec(v.trim()) : null;
  if (!m) throw new ValidationError(field, "must be an ISO-8601 date or timestamp, e.g. 2026-01-31T00:00:00Z");
  const [year, month, day, hour, minute, second] = [1, 2, 3, 4, 5, 6].map((i) => Number(m[i] ?? 0)) as [number, number, number, number, number, number];
  const date = `${m[1]}-${m[2]}-${m[3]}`;
  if (month < 1 || month > 12 || day < 1 || day > (month === 2 && isLeap(year) ? 29 : DAYS[month - 1]!)) {
    throw new ValidationError(field, `${date} is not a calendar date`);
  }
  if (hour > 23 || minute > 59 || second > 59) throw new ValidationError(field, "is not a valid time of day (00:00:00 to 23:59:59)");
  const ms = Number((m[7] ?? "0").padEnd(3, "0").slice(0, 3));
  let offsetMinutes = 0;
  const zone = m[8];
  if (zone && zone.toUpperCase() !== "Z") {
    const z = /^([+-])(\d{2}):?(\d{2})$/.exec(zone)!;
    const oh = Number(z[2]);
    const om = Number(z[3]);
    if (oh > 15 || om > 59) throw new ValidationError(field, "has an offset outside -15:59..+15:59");
    offsetMinutes = (z[1] === "-" ? -1 : 1) * (oh * 60 + om);
  }
  const t = utc(year, month, day, hour, minute, second, ms) - offsetMinutes * 60_000;
  if (t < TIMESTAMP_MIN.getTime() || t > TIMESTAMP_MAX.getTime()) {
    throw new ValidationError(field, `must lie between ${TIMESTAMP_MIN.toISOString()} and ${TIMESTAMP_MAX.toISOString()}`);
  }
  return new Date(t);
}
