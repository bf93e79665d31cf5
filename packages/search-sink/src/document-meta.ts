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
  /** Numeric id for id-range buckets (absent for non-integer ids). */
  key?: number;
  /** Tombstones: when it was written (epoch ms); the retention purge removes it after that. */
  deleted_at?: number;
}

export function documentMeta(id: string, version: number, deleted: boolean, now: number = Date.now()): DocumentMeta {
  const n = Number(id);
  return {
    version,
    hash: entityHash(id, version),
    deleted,
    ...(Number.isSafeInteger(n) && /^-?\d+$/.test(id) ? { key: n } : {}),
    ...(deleted ? { deleted_at: now } : {}),
  };
}
