import { entityHash } from "@tether/core";

/** Field under which tether stores its metadata in every document. */
export const META_FIELD = "tether";

/** Mapping of the metadata; merged into every index tether creates. */
export const META_MAPPING = {
  properties: {
    version: { type: "long" },
    hash: { type: "long" },
    deleted: { type: "boolean" },
    key: { type: "long" },
    deleted_at: { type: "long" },
    content: { type: "keyword", index: false },
  },
} as const;

export interface DocumentMeta {
  version: number;
  hash: number;
  deleted: boolean;
  /**
   * The id as the engine's `long`, for id-range buckets: a number while it is a safe integer,
   * a decimal string past 2^53 (the engine parses it exactly; a JSON number would be rounded).
   * Absent for ids that are not integers a long can hold.
   */
  key?: number | string;
  /** Tombstones: when it was written (epoch ms); the retention purge removes it after that. */
  deleted_at?: number;
}

const LONG_MIN = -(2n ** 63n);
const LONG_MAX = 2n ** 63n - 1n;

/** The `key` of an id: see `DocumentMeta.key`. */
function documentKey(id: string): number | string | undefined {
  if (!/^-?\d+$/.test(id)) return undefined;
  const n = BigInt(id);
  if (n < LONG_MIN || n > LONG_MAX) return undefined;
  return Number.isSafeInteger(Number(n)) ? Number(n) : String(n);
}

export function documentMeta(id: string, version: number, deleted: boolean, now: number = Date.now()): DocumentMeta {
  const key = documentKey(id);
  return {
    version,
    hash: entityHash(id, version),
    deleted,
    ...(key === undefined ? {} : { key }),
    ...(deleted ? { deleted_at: now } : {}),
  };
}
