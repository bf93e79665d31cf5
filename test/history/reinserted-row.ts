import { sql } from "kysely";
import { expectPostgres, expectRelated, type HistoryCommand } from "./history-command.js";
import type { HistoryModel } from "./history-model.js";
import { idCast, idIn, table } from "./history-rows.js";
import { pickLiveTable, type LostWriteKind } from "./lost-write-commands.js";
import { runRelatedStep } from "./related-steps.js";
import type { HistorySystem } from "./history-system.js";

/**
 * A row's second life, by plain SQL, each step its own transaction: a live row (of a table picked
 * by the command, products included) is changed, deleted, and inserted again under the same id
 * with other content. The re-inserted row knows nothing of its first life, yet its version must
 * be above every version the id had (the per-command check), and its document must overtake the
 * first life's document and tombstone (the end check).
 */
export class ReinsertedRow implements HistoryCommand {
  /** `kind` "any": the table picked (by `pick`) among those with a live row. */
  constructor(readonly kind: LostWriteKind | "any", readonly pick: number, readonly title: string) {}
  check = () => true;
  async run(m: HistoryModel, sys: HistorySystem) {
    const picked = pickLiveTable(m, this.kind, this.pick);
    if (!picked) return;
    const { kind, live } = picked;
    const id = live[this.pick % live.length]!;
    const what = (step: string) => `${this.toString()}: ${kind} ${JSON.stringify(id.length > 40 ? `${id.slice(0, 12)}…` : id)} ${step}`;
    if (kind === "product") {
      const product = Number(id) - 1;
      const p = m.related.products.get(id)!;
      const first = p.name === this.title ? `${this.title}'` : this.title;
      await runRelatedStep(sys, sys.db, m.related, { op: "product", action: "rename", product, name: first, category: null, via: "sql" });
      await expectRelated(sys, m, what("changed"));
      await runRelatedStep(sys, sys.db, m.related, { op: "product", action: "hardDelete", product, name: first, category: null, via: "sql" });
      await expectRelated(sys, m, what("deleted"));
      await runRelatedStep(sys, sys.db, m.related, { op: "product", action: "create", product, name: `${first}~`, category: p.category === null ? null : Number(p.category) - 1, via: "sql" });
      await expectRelated(sys, m, what("inserted again"));
      return;
    }
    const row = m.rows[kind].get(id)!;
    const first = row.title === this.title ? `${this.title}'` : this.title;
    await sql`UPDATE ${table(kind)} SET title = ${first} WHERE ${idIn([id])}`.execute(sys.db);
    m.put(kind, id, { ...row, title: first });
    await expectPostgres(sys, m, what("changed"), [kind]);
    await sql`DELETE FROM ${table(kind)} WHERE ${idIn([id])}`.execute(sys.db);
    m.remove(kind, id);
    await expectPostgres(sys, m, what("deleted"), [kind]);
    await sql`INSERT INTO ${table(kind)} (id, title, rank) VALUES (${id}::${idCast(kind)}, ${`${first}~`}, NULL)`.execute(sys.db);
    m.put(kind, id, { title: `${first}~`, rank: null, deleted: false });
    await expectPostgres(sys, m, what("inserted again"), [kind]);
  }
  toString = () => `a live ${this.kind === "any" ? "row of any table" : `${this.kind} row`} (pick ${this.pick}) changed to ${JSON.stringify(this.title)}, deleted and inserted again, by plain SQL`;
}
