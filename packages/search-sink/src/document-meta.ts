import { entityHash, entityKey } from "@tether/core";

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
   * The id's bucket key (`entityKey`: an integer id itself, any other id a 60-bit hash of it) as
   * the engine's `long`, for anti-entropy buckets: a number while it is a safe integer, a
   * decimal string past 2^53 (the engine parses it exactly; a JSON number would be rounded).
   * Absent from documents written before uuid and text ids had one (`tether rebuild` adds it).
   */
  key?: number | string;
  /** Tombstones: when it was written (epoch ms); the retention purge removes it after that. */
  deleted_at?: number;
}

/** The `key` of an id: see `DocumentMeta.key`. */
function documentKey(id: string): number | string {
  const n = entityKey(id);
  return Number.isSafeInteger(Number(n)) ? Number(n) : String(n);
}

export function documentMeta(id: string, version: number, deleted: boolean, now: number = Date.now()): DocumentMeta {
  const key = documentKey(id);
  return {
    version,
    hash: entityHash(id, version),
    deleted,
    key,
    ...(deleted ? { deleted_at: now } : {}),
  };
}
