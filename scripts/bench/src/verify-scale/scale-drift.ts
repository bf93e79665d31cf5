import { sql, type Kysely } from "kysely";
import { SCALE_TABLES, type ScaleIdType } from "./scale-items.js";

/** `count` items spread evenly over items 1..n (the middle of each n/count stretch). */
export function spreadItems(n: number, count: number): number[] {
  const step = n / count;
  return Array.from({ length: count }, (_, k) => Math.floor(k * step + step / 2) + 1);
}

/**
 * Moves the versions of items `gs` by `delta` in Postgres, behind tether's back (no job): +1
 * makes their documents stale, -1 afterwards makes them current again.
 */
export async function shiftVersions(db: Kysely<any>, idType: ScaleIdType, gs: readonly number[], delta: number): Promise<void> {
  const table = sql.table(SCALE_TABLES[idType]);
  const ids = idType === "int" ? sql`SELECT g::bigint FROM unnest(${gs}::int[]) AS g` : sql`SELECT md5('item-' || g)::uuid FROM unnest(${gs}::int[]) AS g`;
  const r = await sql`UPDATE ${table} SET version = version + ${delta} WHERE id IN (${ids})`.execute(db);
  if (Number(r.numAffectedRows) !== gs.length) throw new Error(`shifted ${r.numAffectedRows}/${gs.length} versions`);
}
