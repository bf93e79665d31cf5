import type { Kysely } from "kysely";
import type { Collection } from "../collection.js";
import type { Sink, SinkCallOptions, SinkOperation } from "../sink.js";
import { loadRows } from "../store/collection-store.js";
import { planEntity } from "../verify/verification-matrix.js";

/**
 * Writes the rows of `ids` into `index` as the matrix's forced column says, straight to the
 * sink: the repair of an index no job reaches (one being rebuilt, or one kept for a rollback).
 * An index ahead of its row is left alone (never bump a row for a spare index); a row whose
 * document cannot be built is skipped (the drainer parks its jobs on the live index). Returns
 * how many writes the sink took.
 */
export async function repairInto(db: Kysely<any>, sink: Sink, collection: Collection<any>, index: string, ids: readonly string[], opts?: SinkCallOptions): Promise<number> {
  if (ids.length === 0) return 0;
  const [rows, states] = await Promise.all([loadRows(db, collection, ids), sink.fetchStates(index, ids, opts)]);
  const ops: SinkOperation[] = [];
  for (const id of ids) {
    try {
      const plan = planEntity({ collection, id, row: rows.get(id), downstream: states.get(id), force: true });
      if (plan.action === "write" && plan.bumpVersionTo === undefined) ops.push(plan.op);
    } catch {
      // toDocument threw: nothing to write for it.
    }
  }
  const results = await sink.write(index, ops, opts);
  return results.filter((r) => r.status === "ok").length;
}
