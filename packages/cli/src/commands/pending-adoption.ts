import type { PendingAdoption } from "@tether/core";

/**
 * The lines `tether migrate` prints for tables that still need adopting: a deploy step, not a
 * failure (`tether migrate && tether adopt <collection>` is the natural order), so migrate
 * reports them and exits 0.
 */
export function pendingAdoptionLines(pending: readonly PendingAdoption[]): string[] {
  if (pending.length === 0) return [];
  return [
    `${pending.length} collection(s) need adopting before tether syncs them (the drainer serves the others meanwhile and picks these up once adopted):`,
    ...pending.map((p) => `  ${p.collection}: table "${p.table}" has no ${p.missing.map((c) => `"${c}"`).join(" or ")} column; run \`${p.command}\``),
  ];
}
