import { sql, type RawBuilder } from "kysely";

/**
 * The instant a time-dependent statement compares against: the pinned `now` when a test gives
 * one (so it can move the clock without sleeping), else the database's own `now()` (never the
 * application's clock, which may disagree with Postgres').
 */
export function pinnedClock(now: Date | undefined): RawBuilder<Date> {
  return now ? sql<Date>`${now.toISOString()}::timestamptz` : sql<Date>`now()`;
}

/** A JS instant as a timestamptz parameter. */
export function instant(at: Date): RawBuilder<Date> {
  return sql<Date>`${at.toISOString()}::timestamptz`;
}
