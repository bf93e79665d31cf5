import type fc from "fast-check";
import type { Collection, EntityChange } from "@tether/core";
import { historyCollections, type HistoryRow, type IdKind } from "./history-domain.js";
import type { HistoryModel, ModelRow } from "./history-model.js";
import { comparePostgres } from "./history-rows.js";
import { compareRelated } from "./related-rows.js";
import type { HistorySystem } from "./history-system.js";

/** A command of a history: `check` says whether it applies to the model, `run` does it for real. */
export type HistoryCommand = fc.AsyncCommand<HistoryModel, HistorySystem>;

/** An id named by its slot in the history's pool of that kind (so a history shrinks by slots). */
export interface Ref {
  kind: IdKind;
  slot: number;
}

export const idOf = (sys: HistorySystem, ref: Ref) => sys.pools[ref.kind][ref.slot]!;
export const collectionOf = (kind: IdKind): Collection<HistoryRow> => historyCollections[kind];
export const show = (ref: Ref) => `${ref.kind}#${ref.slot}`;
export const showRow = (r: Pick<ModelRow, "title" | "rank">) => `${JSON.stringify(r.title)}${r.rank === null ? "" : `/${JSON.stringify(r.rank)}`}`;

/** Raised inside a transaction a command rolls back on purpose. */
export class IntendedRollback extends Error {
  readonly code = "intended_rollback";
}

/** After a command: Postgres must hold what the model says (see `comparePostgres`). */
export async function expectPostgres(sys: HistorySystem, model: HistoryModel, what: string, kinds: readonly IdKind[]): Promise<void> {
  const problems = await comparePostgres(sys.db, model, kinds);
  if (problems.length > 0) throw new Error(`after ${what}:\n  ${problems.join("\n  ")}`);
}

/** After a command on the related tables: they must hold what the model says (see `compareRelated`). */
export async function expectRelated(sys: HistorySystem, model: HistoryModel, what: string): Promise<void> {
  const problems = await compareRelated(sys.db, model.related, model.checkVersions);
  if (problems.length > 0) throw new Error(`after ${what}:\n  ${problems.join("\n  ")}`);
}

/** Groups a transaction's changes by collection, for `syncNow` after COMMIT. */
export function changesByKind(changes: readonly { kind: IdKind; change: EntityChange<HistoryRow> }[]): Map<IdKind, EntityChange<HistoryRow>[]> {
  const out = new Map<IdKind, EntityChange<HistoryRow>[]>();
  for (const { kind, change } of changes) out.set(kind, [...(out.get(kind) ?? []), change]);
  return out;
}
