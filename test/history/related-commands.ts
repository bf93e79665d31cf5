import type { EntityChange } from "@tether/core";
import { shopProducts } from "../support/shop.js";
import { expectRelated, IntendedRollback, type HistoryCommand } from "./history-command.js";
import type { HistoryModel } from "./history-model.js";
import type { HistorySystem } from "./history-system.js";
import { relatedStepApplies, runRelatedStep, showRelatedStep, type RelatedStep } from "./related-steps.js";

/** One change of the related tables on its own: its own transaction (and the writer's direct sync). */
export class RelatedCall implements HistoryCommand {
  constructor(readonly step: RelatedStep) {}
  check = (m: Readonly<HistoryModel>) => relatedStepApplies(m.related, this.step);
  async run(m: HistoryModel, sys: HistorySystem) {
    await runRelatedStep(sys, sys.db, m.related, this.step);
    await expectRelated(sys, m, this.toString());
  }
  toString = () => showRelatedStep(this.step);
}

/**
 * Several changes of the related tables in the caller's own transaction (writer verbs and plain
 * statements mixed), which COMMITs and sends the products the writer bumped with `syncNow`, or
 * rolls back and leaves nothing.
 */
export class RelatedTransaction implements HistoryCommand {
  constructor(readonly steps: RelatedStep[], readonly commit: boolean) {}
  check = () => true;
  async run(m: HistoryModel, sys: HistorySystem) {
    const draft = m.related.clone();
    const changes: EntityChange<any>[] = [];
    try {
      await sys.db.transaction().execute(async (trx) => {
        for (const s of this.steps) if (relatedStepApplies(draft, s)) changes.push(...(await runRelatedStep(sys, trx, draft, s)));
        if (!this.commit) throw new IntendedRollback("rolled back on purpose");
      });
    } catch (err) {
      if (!(err instanceof IntendedRollback)) throw err;
    }
    if (this.commit) {
      m.related.copyRows(draft);
      if (changes.length > 0) await sys.writer.syncNow(shopProducts, changes);
    }
    await expectRelated(sys, m, this.toString());
  }
  toString = () => `related transaction[${this.steps.map(showRelatedStep).join("; ")}] ${this.commit ? "COMMIT + syncNow" : "ROLLBACK"}`;
}
