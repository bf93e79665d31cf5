import type { TombstonePurgeResult } from "@tether/core";
import { META_FIELD } from "./document-meta.js";
import type { SearchAnswer } from "./engine-answers.js";

const PURGE_PAGE = 1_000;

/** The sink's calls a purge makes on one index, with the sink's retries and bounds. */
export interface PurgeCalls {
  /** Refreshes the index; false when it does not exist. */
  refresh(): Promise<boolean>;
  search(body: Record<string, unknown>): Promise<SearchAnswer>;
  bulk(lines: unknown[]): Promise<Record<string, unknown>[]>;
}

/**
 * Tombstones of `target` written before `before`, removed page by page: a search (refreshed),
 * then a bulk of deletes at each tombstone's version + 1 (external), which a newer write since
 * refuses. A removed tombstone's id is guarded by the engine's delete marker for
 * `index.gc_deletes` more, then no longer: that is the retention's trade-off.
 */
export async function purgeTombstonesOf(target: string, p: { before: number; dryRun?: boolean }, calls: PurgeCalls): Promise<TombstonePurgeResult> {
  const result: TombstonePurgeResult = { found: 0, purged: 0, skipped: 0 };
  const skippedIds: string[] = [];
  const query = () => ({
    bool: {
      filter: [{ term: { [`${META_FIELD}.deleted`]: true } }, { range: { [`${META_FIELD}.deleted_at`]: { lt: p.before } } }],
      ...(skippedIds.length > 0 ? { must_not: [{ ids: { values: skippedIds } }] } : {}),
    },
  });
  if (!(await calls.refresh())) return result;
  if (p.dryRun) {
    const res = await calls.search({ size: 0, track_total_hits: true, query: query() });
    const total = res.hits.total;
    result.found = typeof total === "number" ? total : (total?.value ?? 0);
    return result;
  }
  for (;;) {
    const res = await calls.search({ size: PURGE_PAGE, version: true, _source: false, track_total_hits: false, query: query() });
    const hits = res.hits.hits;
    if (hits.length === 0) break;
    result.found += hits.length;
    const lines = hits.map((h) => ({ delete: { _index: target, _id: String(h._id), version: Number(h._version ?? 0) + 1, version_type: "external" } }));
    const items = await calls.bulk(lines);
    items.forEach((item, i) => {
      const status = Number((item.delete as { status?: number } | undefined)?.status ?? 0);
      if (status >= 200 && status < 300) result.purged += 1;
      else {
        // 409: a newer write since; anything else is left for the next purge.
        result.skipped += 1;
        skippedIds.push(String(hits[i]!._id));
      }
    });
    await calls.refresh();
  }
  return result;
}
