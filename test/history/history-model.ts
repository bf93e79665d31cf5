import type { IdKind } from "./history-domain.js";
import type { IdPools } from "./history-ids.js";
import { ID_KINDS } from "./history-domain.js";
import { RelatedModel } from "./related-model.js";

/** What a row holds, as far as the history knows. */
export interface ModelRow {
  title: string;
  rank: string | null;
  deleted: boolean;
}

/** A rank the mapping (an integer field) refuses: a write of it must park, not loop. */
export const REFUSED_RANK = "not-a-number";

/**
 * The model of a history: the rows each table should hold after the commands run so far, and
 * the highest version each entity has shown (it must only move forward, across delete and
 * re-insert too). Postgres is compared with it after every command; the engine only after
 * quiescence, against Postgres.
 */
export class HistoryModel {
  /** The ids of this history, by kind; commands name them by slot. */
  constructor(readonly pools: IdPools) {}

  idOf(ref: { kind: IdKind; slot: number }): string {
    return this.pools[ref.kind][ref.slot]!;
  }

  readonly rows: Record<IdKind, Map<string, ModelRow>> = { bigint: new Map(), uuid: new Map(), text: new Map() };
  /** Highest version seen per entity, and the content it had at that version. */
  readonly seen: Record<IdKind, Map<string, { version: bigint; content: string }>> = { bigint: new Map(), uuid: new Map(), text: new Map() };
  /** The related tables (the shop's products and the rows their documents read). */
  readonly related = new RelatedModel();
  /** Whether `comparePostgres` holds versions to moving forward (the runner's `skipVersionCheck` turns it off). */
  checkVersions = true;
  /** A write of a refused rank committed at some point (parking is then allowed). */
  refusalInjected = false;
  /** What Postgres held at the last `PostgresCheckpoint` (the model as it was then). */
  pgCheckpoint: HistoryModel | undefined;
  /** The last `IndexSnapshot`: its name and the concrete index it took of each collection. */
  indexSnapshot: { name: string; indices: Map<string, string> } | undefined;

  has(kind: IdKind, id: string): boolean {
    return this.rows[kind].has(id);
  }

  live(kind: IdKind, id: string): boolean {
    const r = this.rows[kind].get(id);
    return r !== undefined && !r.deleted;
  }

  put(kind: IdKind, id: string, row: ModelRow): void {
    if (row.rank === REFUSED_RANK) this.refusalInjected = true;
    this.rows[kind].set(id, row);
  }

  remove(kind: IdKind, id: string): void {
    this.rows[kind].delete(id);
  }

  /** A deep copy, for commands that apply their parts to a draft and keep it only on COMMIT. */
  clone(): HistoryModel {
    const c = new HistoryModel(this.pools);
    for (const k of ID_KINDS) {
      for (const [id, r] of this.rows[k]) c.rows[k].set(id, { ...r });
      for (const [id, s] of this.seen[k]) c.seen[k].set(id, { ...s });
    }
    c.related.copyRows(this.related);
    c.refusalInjected = this.refusalInjected;
    c.checkVersions = this.checkVersions;
    return c;
  }

  /** Takes over a draft's rows (the draft committed). */
  adopt(draft: HistoryModel): void {
    for (const k of ID_KINDS) {
      this.rows[k].clear();
      for (const [id, r] of draft.rows[k]) this.rows[k].set(id, r);
    }
    this.related.copyRows(draft.related);
    this.refusalInjected ||= draft.refusalInjected;
  }

  /** The whole model as it is now, versions seen included: what a Postgres checkpoint holds. */
  checkpoint(): HistoryModel {
    const c = this.clone();
    for (const [id, s] of this.related.seen) c.related.seen.set(id, { ...s });
    return c;
  }

  /**
   * Postgres went back to a checkpoint: the rows and the versions seen are the checkpoint's
   * again. What was written after it is gone from the model too.
   */
  restore(from: HistoryModel): void {
    this.adopt(from);
    for (const k of ID_KINDS) {
      this.seen[k].clear();
      for (const [id, s] of from.seen[k]) this.seen[k].set(id, { ...s });
    }
    this.related.seen.clear();
    for (const [id, s] of from.related.seen) this.related.seen.set(id, { ...s });
  }

  rowsOf(kind: IdKind): [string, ModelRow][] {
    return [...this.rows[kind]];
  }
}

export const contentOf = (r: ModelRow | undefined): string => (r === undefined ? "absent" : JSON.stringify([r.title, r.rank, r.deleted]));
