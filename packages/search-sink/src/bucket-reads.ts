import type { BucketRange, BucketSummary, DownstreamState } from "@tether/core";
import { META_FIELD } from "./document-meta.js";
import type { SearchAnswer } from "./engine-answers.js";

/** One `_search` on the sink's index, with the sink's retries and bounds. */
export type SearchCall = (body: Record<string, unknown>) => Promise<SearchAnswer>;

const LIST_PAGE = 5_000;

/**
 * Count, hash sum and version sum of live documents per id bucket: one aggregation, plus (when
 * the engine cannot aggregate `_version`) a scan of ids and versions for the version sums.
 */
export async function summarizeBuckets(search: SearchCall, buckets: readonly BucketRange[], aggregatesVersions: boolean): Promise<BucketSummary[]> {
  if (buckets.length === 0) return [];
  const res = await search({
    size: 0,
    track_total_hits: false,
    query: { bool: { filter: [{ term: { [`${META_FIELD}.deleted`]: false } }] } },
    aggs: {
      b: {
        range: { field: `${META_FIELD}.key`, ranges: buckets.map((b) => ({ from: b.from, to: b.to })), keyed: false },
        aggs: { h: { sum: { field: `${META_FIELD}.hash` } }, ...(aggregatesVersions ? { v: { sum: { field: "_version" } } } : {}) },
      },
    },
  });
  const agg = (res.aggregations?.b as { buckets: { doc_count: number; h: { value: number }; v?: { value: number } }[] } | undefined)?.buckets ?? [];
  const scanned = aggregatesVersions ? undefined : await scanVersionSums(search, buckets);
  return buckets.map((_, i) => ({
    count: agg[i]?.doc_count ?? 0,
    hashSum: agg[i]?.h.value ?? 0,
    versionSum: scanned ? scanned[i]! : (agg[i]?.v?.value ?? 0),
  }));
}

/** Per-bucket sums of `_version` over live documents, read page by page (ids and versions only). */
async function scanVersionSums(search: SearchCall, buckets: readonly BucketRange[]): Promise<number[]> {
  const sums = buckets.map(() => 0);
  const order = buckets.map((b, i) => ({ ...b, i })).sort((a, b) => a.from - b.from);
  const from = order[0]!.from;
  const to = Math.max(...order.map((b) => b.to));
  let after: unknown[] | undefined;
  for (;;) {
    const res = await search({
      size: LIST_PAGE,
      version: true,
      _source: false,
      track_total_hits: false,
      query: { bool: { filter: [{ term: { [`${META_FIELD}.deleted`]: false } }, { range: { [`${META_FIELD}.key`]: { gte: from, lt: to } } }] } },
      sort: [{ [`${META_FIELD}.key`]: "asc" }],
      ...(after ? { search_after: after } : {}),
    });
    const hits = res.hits.hits;
    let k = 0;
    for (const h of hits) {
      const key = Number(h.sort?.[0]);
      // Hits come sorted by key, so the bucket cursor only moves forward.
      while (k < order.length && order[k]!.to <= key) k++;
      const b = order[k];
      if (b && key >= b.from && key < b.to) sums[b.i]! += Number(h._version ?? 0);
    }
    if (hits.length < LIST_PAGE) break;
    after = hits[hits.length - 1]!.sort;
  }
  return sums;
}

/** Every document state with an id in [from, to), tombstones included, page by page. */
export async function listBucketStates(search: SearchCall, range: BucketRange): Promise<Map<string, DownstreamState>> {
  const out = new Map<string, DownstreamState>();
  let after: unknown[] | undefined;
  for (;;) {
    const res = await search({
      size: LIST_PAGE,
      version: true,
      _source: [`${META_FIELD}.deleted`],
      query: { range: { [`${META_FIELD}.key`]: { gte: range.from, lt: range.to } } },
      sort: [{ [`${META_FIELD}.key`]: "asc" }],
      ...(after ? { search_after: after } : {}),
    });
    const hits = res.hits.hits;
    for (const h of hits) out.set(String(h._id), { version: Number(h._version ?? 0), deleted: (h._source as { tether?: { deleted?: boolean } } | undefined)?.tether?.deleted === true });
    if (hits.length < LIST_PAGE) break;
    after = hits[hits.length - 1]!.sort;
  }
  return out;
}
