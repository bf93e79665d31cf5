/** The shapes of the engines' answers the sinks read (both engines answer alike). */

/** One `_mget` entry, as both engines answer it. */
export interface MgetDoc {
  _id: string;
  found?: boolean;
  _version?: number;
  _source?: { tether?: { deleted?: boolean; content?: string } };
  error?: { type?: string; reason?: string | null };
}

/** The part of a `_search` answer the sinks read. */
export interface SearchAnswer {
  hits: { total?: number | { value: number }; hits: { _id?: string | null; _version?: number; _source?: unknown; sort?: unknown[] }[] };
  aggregations?: Record<string, unknown>;
}

/**
 * `filter_path` of the answers the sinks read in bulk (a drain pass reads 2500 at a time): only
 * the fields above, so the engine serialises, and the sink parses, a fraction of each answer
 * (a bulk item keeps its id, status and error, not its index, shards, sequence number or term).
 */
export const ANSWER_FILTERS = {
  bulk: "items.*._id,items.*.status,items.*.error",
  mget: "docs._id,docs.found,docs._version,docs._source,docs.error",
} as const;
