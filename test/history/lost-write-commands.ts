import { sql } from "kysely";
import type { Collection } from "@tether/core";
import { waitFor, type FaultMode } from "@tether/testkit";
import { shopProducts } from "../support/shop.js";
import { ID_KINDS, tableOf, type IdKind } from "./history-domain.js";
import { collectionOf, expectPostgres, expectRelated, type HistoryCommand } from "./history-command.js";
import { REFUSED_RANK, type HistoryModel } from "./history-model.js";
import { idIn, table } from "./history-rows.js";
import { runRelatedStep } from "./related-steps.js";
import type { HistorySystem } from "./history-system.js";

/** A 200 OK whose every bulk item was dropped, answered as written. */
const DROP_EVERY_ITEM: FaultMode = { kind: "dropBulkItems", fraction: 1, forge: true };

/** One of the history's tables, or the shop's products. */
export type LostWriteKind = IdKind | "product";
export const LOST_WRITE_KINDS: readonly LostWriteKind[] = ["product", ...ID_KINDS];

const collectionFor = (kind: LostWriteKind): Collection<any> => (kind === "product" ? shopProducts : collectionOf(kind));
const tableFor = (kind: LostWriteKind) => (kind === "product" ? shopProducts.table : tableOf(kind));

/** The table `pick` chooses (`kind` "any": among those with a live row) and its live ids; undefined when it has none. */
export function pickLiveTable(m: HistoryModel, kind: LostWriteKind | "any", pick: number): { kind: LostWriteKind; live: string[] } | undefined {
  const kinds = kind === "any" ? LOST_WRITE_KINDS.filter((k) => liveIds(m, k).length > 0) : [kind];
  if (kinds.length === 0) return undefined;
  const chosen = kinds[pick % kinds.length]!;
  const live = liveIds(m, chosen);
  return live.length === 0 ? undefined : { kind: chosen, live };
}

/** The live rows of `kind` the model knows (a refused rank never reaches the engine: left out), in id order. */
export function liveIds(m: HistoryModel, kind: LostWriteKind): string[] {
  const ids =
    kind === "product"
      ? [...m.related.products].filter(([, p]) => !p.deleted).map(([id]) => id)
      : m.rowsOf(kind).flatMap(([id, r]) => (r.deleted || r.rank === REFUSED_RANK ? [] : [id]));
  return ids.sort();
}

/** Of `ids`, those whose document is live at its row's version. */
async function currentIds(sys: HistorySystem, kind: LostWriteKind, ids: readonly string[]): Promise<string[]> {
  if (ids.length === 0) return [];
  const r = await sql<{ id: string; v: string }>`SELECT id::text AS id, version::text AS v FROM ${sql.table(tableFor(kind))} WHERE ${idIn(ids)}`.execute(sys.db);
  const states = await sys.sink.fetchStates(collectionFor(kind).index, ids);
  return r.rows.filter((row) => {
    const ds = states.get(row.id);
    return ds !== undefined && !ds.deleted && ds.version === Number(row.v);
  }).map((row) => row.id).sort();
}

async function dueJobs(sys: HistorySystem): Promise<number> {
  const r = await sql<{ n: string }>`SELECT count(*) AS n FROM tether.job WHERE scheduled_at <= now()`.execute(sys.db);
  return Number(r.rows[0]!.n);
}

/** Drain passes of the in-process drainers, their engine calls faultless, until no job is due (or a bound passes). */
export async function drainQueue(sys: HistorySystem): Promise<void> {
  await sys.drainerProxy.setMode("pass");
  await waitFor(
    async () => {
      if ((await dueJobs(sys)) === 0) return true;
      await Promise.all(sys.drainers.map((d) => d.drainOnce()));
      return undefined;
    },
    { what: "the queue to drain", timeoutMs: 20_000, intervalMs: 20 },
  ).catch(() => undefined);
}

/**
 * A document made older than its row, then a pass whose writes are all lost: drain passes
 * (faultless) empty the queue, one of the live rows of a table whose document is then current is
 * changed again by plain SQL (a new version, a captured job), and one drain pass
 * meets a 200 OK that dropped every bulk item; the fault is lifted after. The pass's read-back
 * finds the previous document, live, behind the row: what it wrote is not there, and it must not
 * be confirmed. (A bug that confirms an older document as current leaves it behind for good: no
 * job is left to bring it up to date.)
 */
export class LostWriteOverOlderDocument implements HistoryCommand {
  /** `kind` "any": the table picked (by `pick`) among those with a live row. */
  constructor(readonly kind: LostWriteKind | "any", readonly pick: number, readonly title: string) {}
  check = () => true;
  async run(m: HistoryModel, sys: HistorySystem) {
    const picked = pickLiveTable(m, this.kind, this.pick);
    if (!picked) return;
    const { kind, live } = picked;
    // Drained first (faultless), so the pass below claims the job of this change, not an older backlog.
    await drainQueue(sys);
    const current = await currentIds(sys, kind, live);
    if (current.length === 0) return;
    const id = current[this.pick % current.length]!;
    if (kind === "product") {
      const name = m.related.products.get(id)!.name === this.title ? `${this.title}'` : this.title;
      await runRelatedStep(sys, sys.db, m.related, { op: "product", action: "rename", product: Number(id) - 1, name, category: null, via: "sql" });
      await expectRelated(sys, m, this.toString());
    } else {
      const row = m.rows[kind].get(id)!;
      const title = row.title === this.title ? `${this.title}'` : this.title;
      await sql`UPDATE ${table(kind)} SET title = ${title} WHERE ${idIn([id])}`.execute(sys.db);
      m.put(kind, id, { ...row, title });
      await expectPostgres(sys, m, this.toString(), [kind]);
    }
    await sys.drainerProxy.setMode(DROP_EVERY_ITEM);
    try {
      await sys.drainers[0]!.drainOnce();
    } finally {
      await sys.drainerProxy.setMode("pass");
    }
  }
  toString = () =>
    `a current ${this.kind === "any" ? "document of any table" : `${this.kind} document`} (pick ${this.pick}) made older: its row changed by plain SQL to ${JSON.stringify(this.title)}, then a drain pass whose bulk items are all dropped (a 200), the fault lifted after`;
}
