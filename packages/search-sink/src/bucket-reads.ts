import type { BucketRange, BucketSummary, DownstreamState } from "@tether/core";
import { META_FIELD } from "./document-meta.js";
import type { SearchAnswer } from "./engine-answers.js";

/** One `_search` on the sink's index, with the sink's retries and bounds. */
export type SearchCall = (body: Record<string, unknown>) => Promise<SearchAnswer>;

const LIST_PAGE = 5_000;
const KEY = `${META_FIELD}.key`;

/**
 * `[from, to)` as a range query on the stored key, exact over the whole bigint space: bounds
 * travel as decimal strings (the engine parses them as longs; a JSON number past 2^53 would be
 * rounded) and the upper one inclusive, since `to` may be 2^63, past a long. `after` narrows
 * the lower bound to the keys past a page already read.
 */
export function keyRange(range: BucketRange, after?: bigint): Record<string, unknown> {
  const lower = after === undefined ? { gte: String(range.from) } : { gt: String(after) };
  return { range: { [KEY]: { ...lower, lte: String(range.to - 1n) } } };
}

const live = { term: { [`${META_FIELD}.deleted`]: false } };

/** The exact key of a hit, from its source (a number up to 2^53, a decimal string past it). */
function hitKey(h: { _source?: unknown }): bigint {
  return BigInt(String((h._source as { tether?: { key?: number | string } } | undefined)?.tether?.key));
}

/** The smallest range holding every bucket. */
function spanOf(buckets: readonly BucketRange[]): BucketRange {
  let { from, to } = buckets[0]!;
  for (const b of buckets) {
    if (b.from < from) from = b.from;
    if (b.to > to) to = b.to;
  }
  return { from, to };
}

/**
 * Count, hash sum and version sum of live documents per id bucket: one aggregation, plus (when
 * the engine cannot aggregate `_version`) a scan of ids and versions for the version sums.
 * Buckets are `filters` of range queries, not a `range` aggregation: that one compares in
 * doubles, which cannot tell 2^53 from 2^53 + 1. The query itself is limited to the buckets'
 * span: the engine evaluates the filters on every document the query matches, so without it
 * each window of buckets would read the whole index, and a verify would grow with the square
 * of the collection.
 */
export async function summarizeBuckets(search: SearchCall, buckets: readonly BucketRange[], aggregatesVersions: boolean): Promise<BucketSummary[]> {
  if (buckets.length === 0) return [];
  const res = await search({
    size: 0,
    track_total_hits: false,
    query: { bool: { filter: [live, keyRange(spanOf(buckets))] } },
    aggs: {
      b: {
        filters: { filters: buckets.map((b) => keyRange(b)) },
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

/**
 * Every hit with a key in `range` (of `filter`, when given), in key order, page by page. Pages
 * continue after the last key read from `_source`, exact, not from the hit's sort value, which
 * JSON parsing rounds to a double.
 */
async function* scanKeys(search: SearchCall, range: BucketRange, source: string[], filter: unknown[]) {
  let after: bigint | undefined;
  for (;;) {
    const res = await search({
      size: LIST_PAGE,
      version: true,
      _source: [KEY, ...source],
      track_total_hits: false,
      query: { bool: { filter: [...filter, keyRange(range, after)] } },
      sort: [{ [KEY]: "asc" }],
    });
    const hits = res.hits.hits;
    for (const h of hits) yield { hit: h, key: hitKey(h) };
    if (hits.length < LIST_PAGE) return;
    after = hitKey(hits[hits.length - 1]!);
  }
}

/** Per-bucket sums of `_version` over live documents, read page by page (keys and versions only). */
async function scanVersionSums(search: SearchCall, buckets: readonly BucketRange[]): Promise<number[]> {
  const sums = buckets.map(() => 0);
  const order = buckets.map((b, i) => ({ ...b, i })).sort((a, b) => (a.from < b.from ? -1 : a.from > b.from ? 1 : 0));
  const span = { from: order[0]!.from, to: order.reduce((m, b) => (b.to > m ? b.to : m), order[0]!.to) };
  let k = 0;
  for await (const { hit, key } of scanKeys(search, span, [], [live])) {
    // Hits come sorted by key, so the bucket cursor only moves forward.
    while (k < order.length && order[k]!.to <= key) k++;
    const b = order[k];
    if (b && key >= b.from && key < b.to) sums[b.i]! += Number(hit._version ?? 0);
  }
  return sums;
}

/** Every document state with an id in [from, to), tombstones included, page by page. */
export async function listBucketStates(search: SearchCall, range: BucketRange): Promise<Map<string, DownstreamState>> {
  const out = new Map<string, DownstreamState>();
  for await (const { hit: h } of scanKeys(search, range, [`${META_FIELD}.deleted`], [])) {
    out.set(String(h._id), { version: Number(h._version ?? 0), deleted: (h._source as { tether?: { deleted?: boolean } } | undefined)?.tether?.deleted === true });
  }
  return out;
}
