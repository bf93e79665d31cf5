import { META_FIELD } from "./document-meta.js";
import type { SearchCall } from "./bucket-reads.js";

/**
 * The highest `tether.version` of an index, tombstones included (one `max` aggregation, which the
 * engine answers from the field's index), or undefined when it holds none. See `Sink.highestVersion`.
 */
export async function highestVersionOf(search: SearchCall): Promise<number | undefined> {
  const answer = await search({ size: 0, track_total_hits: false, aggs: { highest: { max: { field: `${META_FIELD}.version` } } } });
  const value = (answer.aggregations?.highest as { value?: number | null } | undefined)?.value;
  return typeof value === "number" && Number.isFinite(value) ? value : undefined;
}
