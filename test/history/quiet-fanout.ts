import type { HistoryCommand } from "./history-command.js";
import { expectRelated } from "./history-command.js";
import type { HistoryModel } from "./history-model.js";
import { drainQueue } from "./lost-write-commands.js";
import type { ParentTable, RelatedModel } from "./related-model.js";
import { runRelatedStep } from "./related-steps.js";
import type { HistorySystem } from "./history-system.js";

/** The live products each existing category, tag and order reaches, most first (then by table and id). */
function reach(m: RelatedModel): { table: ParentTable; id: string; products: number }[] {
  const out: { table: ParentTable; id: string; products: number }[] = [];
  for (const table of ["category", "tag", "order"] as const) {
    for (const id of m.parents[table].keys()) {
      const reached = new Set<string>();
      if (table === "category") for (const [p, row] of m.products) if (row.category === id) reached.add(p);
      if (table === "tag") for (const l of m.links) if (l.split(":")[1] === id) reached.add(l.split(":")[0]!);
      if (table === "order") for (const line of m.lines.values()) if (line.order === id) reached.add(line.product);
      out.push({ table, id, products: [...reached].filter((p) => m.live(p)).length });
    }
  }
  return out.sort((a, b) => b.products - a.products);
}

/**
 * A fan-out over a quiet queue: drain passes (faultless) empty the queue, so every document is
 * current and nothing else will touch them, then a category, tag or order that several live
 * products read (the one that reaches most, or one of those reaching at least two, by `pick`) is
 * renamed by plain SQL. Only the fan-out's chunks bring each of those documents up to date: one
 * it skips stays behind with nothing left to bring it.
 */
export class FanoutOverQuietQueue implements HistoryCommand {
  constructor(readonly pick: number, readonly name: string) {}
  check = () => true;
  async run(m: HistoryModel, sys: HistorySystem) {
    const all = reach(m.related);
    const wide = all.filter((r) => r.products >= 2);
    const target = wide.length > 0 ? wide[this.pick % wide.length]! : all[0];
    if (target === undefined || target.products === 0) return;
    await drainQueue(sys);
    const value = m.related.parents[target.table].get(target.id) === this.name ? `${this.name}'` : this.name;
    await runRelatedStep(sys, sys.db, m.related, { op: "parent", table: target.table, slot: Number(target.id) - 1, value, via: "sql" });
    await expectRelated(sys, m, this.toString());
  }
  toString = () => `the queue drained, then a category, tag or order several products read (pick ${this.pick}) renamed to ${JSON.stringify(this.name)} by plain SQL`;
}
