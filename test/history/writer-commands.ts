import { sql } from "kysely";
import type { EntityChange, Writer } from "@tether/core";
import type { HistoryRow, IdKind } from "./history-domain.js";
import { changesByKind, collectionOf, expectPostgres, idOf, IntendedRollback, show, showRow, type HistoryCommand, type Ref } from "./history-command.js";
import type { HistoryModel } from "./history-model.js";
import { idIn, table } from "./history-rows.js";
import type { HistorySystem } from "./history-system.js";

type Db = Parameters<Writer["createWithJob"]>[0];

/** One writer call, applied to a model (the history's, or a transaction's draft). */
export type WriterStep =
  | { op: "create"; ref: Ref; title: string; rank: string | null }
  | { op: "update"; ref: Ref; title: string; rank: string | null }
  | { op: "softDelete"; ref: Ref }
  | { op: "hardDelete"; ref: Ref }
  /** A plain statement inside the writer's transaction: the capture trigger must take it again. */
  | { op: "sqlUpdate"; ref: Ref; title: string };

export const showStep = (s: WriterStep): string =>
  s.op === "create" || s.op === "update" ? `${s.op}(${show(s.ref)}, ${showRow(s)})` : s.op === "sqlUpdate" ? `sqlUpdate(${show(s.ref)}, ${JSON.stringify(s.title)})` : `${s.op}(${show(s.ref)})`;

/** Whether the step applies to `model` (a create needs no row; the rest a live one, a hard delete any). */
export function stepApplies(model: HistoryModel, s: WriterStep): boolean {
  if (s.op === "create") return !model.has(s.ref.kind, model.idOf(s.ref));
  if (s.op === "hardDelete") return model.has(s.ref.kind, model.idOf(s.ref));
  return model.live(s.ref.kind, model.idOf(s.ref));
}

/** Runs one step through the writer on `db` (a Kysely or the caller's transaction), and on `model`. */
async function runStep(sys: HistorySystem, db: Db, model: HistoryModel, s: WriterStep): Promise<{ kind: IdKind; change: EntityChange<HistoryRow> } | undefined> {
  const c = collectionOf(s.ref.kind);
  const id = idOf(sys, s.ref);
  switch (s.op) {
    case "create": {
      const r = await sys.writer.createWithJob(db, c, { id, title: s.title, rank: s.rank });
      model.put(s.ref.kind, id, { title: s.title, rank: s.rank, deleted: false });
      return { kind: s.ref.kind, change: r.changes[0]! };
    }
    case "update": {
      const r = await sys.writer.updateWithJob(db, c, id, { title: s.title, rank: s.rank });
      model.put(s.ref.kind, id, { title: s.title, rank: s.rank, deleted: false });
      return { kind: s.ref.kind, change: r.changes[0]! };
    }
    case "softDelete": {
      const r = await sys.writer.deleteWithJob(db, c, id);
      model.put(s.ref.kind, id, { ...model.rows[s.ref.kind].get(id)!, deleted: true });
      return { kind: s.ref.kind, change: r.changes[0]! };
    }
    case "hardDelete": {
      const r = await sys.writer.deleteWithJob(db, c, id, { hard: true });
      model.remove(s.ref.kind, id);
      return { kind: s.ref.kind, change: r.changes[0]! };
    }
    case "sqlUpdate": {
      await sql`UPDATE ${table(s.ref.kind)} SET title = ${s.title} WHERE ${idIn([id])}`.execute(db);
      model.put(s.ref.kind, id, { ...model.rows[s.ref.kind].get(id)!, title: s.title });
      return undefined;
    }
  }
}

/** One writer call on its own: its own transaction and its direct sync. */
export class WriterCall implements HistoryCommand {
  constructor(readonly step: WriterStep) {}
  check = (m: Readonly<HistoryModel>) => this.step.op !== "sqlUpdate" && stepApplies(m as HistoryModel, this.step);
  async run(m: HistoryModel, sys: HistorySystem) {
    await runStep(sys, sys.db, m, this.step);
    await expectPostgres(sys, m, this.toString(), [this.step.ref.kind]);
  }
  toString = () => `writer.${showStep(this.step)}`;
}

/**
 * The caller's own transaction: several writer calls (and plain statements) that COMMIT
 * together and are synced with `syncNow` afterwards, or roll back and leave nothing.
 */
export class CallerTransaction implements HistoryCommand {
  constructor(readonly steps: WriterStep[], readonly commit: boolean) {}
  check = () => true;
  async run(m: HistoryModel, sys: HistorySystem) {
    const draft = m.clone();
    const changes: { kind: IdKind; change: EntityChange<HistoryRow> }[] = [];
    try {
      await sys.db.transaction().execute(async (trx) => {
        for (const s of this.steps) {
          if (!stepApplies(draft, s)) continue;
          const c = await runStep(sys, trx, draft, s);
          if (c) changes.push(c);
        }
        if (!this.commit) throw new IntendedRollback("rolled back on purpose");
      });
    } catch (err) {
      if (!(err instanceof IntendedRollback)) throw err;
    }
    if (this.commit) {
      m.adopt(draft);
      for (const [kind, cs] of changesByKind(changes)) await sys.writer.syncNow(collectionOf(kind), cs);
    }
    await expectPostgres(sys, m, this.toString(), ["bigint", "uuid", "text"]);
  }
  toString = () => `transaction[${this.steps.map(showStep).join("; ")}] ${this.commit ? "COMMIT + syncNow" : "ROLLBACK"}`;
}

/** `writeWithJobs`: the caller's own UPDATE of several live rows (bumping versions itself), one job each. */
export class WriteWithJobs implements HistoryCommand {
  constructor(readonly kind: IdKind, readonly slots: number[], readonly title: string) {}
  check = () => true;
  async run(m: HistoryModel, sys: HistorySystem) {
    const ids = this.slots.map((slot) => idOf(sys, { kind: this.kind, slot }));
    await sys.writer.writeWithJobs(sys.db, collectionOf(this.kind), async (trx) => {
      const r = await sql<HistoryRow>`UPDATE ${table(this.kind)} SET title = ${this.title}, version = version + 1
        WHERE ${idIn(ids)} AND deleted_at IS NULL RETURNING *`.execute(trx);
      return r.rows.map((row) => ({ id: String(row.id), row }));
    });
    for (const id of ids) if (m.live(this.kind, id)) m.put(this.kind, id, { ...m.rows[this.kind].get(id)!, title: this.title });
    await expectPostgres(sys, m, this.toString(), [this.kind]);
  }
  toString = () => `writer.writeWithJobs(${this.kind}#[${this.slots.join(",")}] SET title=${JSON.stringify(this.title)})`;
}
