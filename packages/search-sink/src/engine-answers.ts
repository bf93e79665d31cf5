/** The shapes of the engines' answers the sinks read (both engines answer alike). */

/** One `_mget` entry, as both engines answer it. */
export interface MgetDoc {
  _id: string;
  found?: boolean;
  _version?: number;
  _source?: { tether?: { deleted?: boolean } };
  error?: { type?: string; reason?: string | null };
}

/** The part of a `_search` answer the sinks read. */
export interface SearchAnswer {
  hits: { total?: number | { value: number }; hits: { _id?: string | null; _version?: number; _source?: unknown; sort?: unknown[] }[] };
  aggregations?: Record<string, unknown>;
}
