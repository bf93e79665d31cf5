import { hash } from "node:crypto";

/**
 * The bucket key of an entity id, the coordinate anti-entropy buckets partition: computed here
 * for the sink, which stores it in every document (`tether.key`), and in SQL by
 * `tether.entity_key(text)` (migration 000013), so both sides sum the same buckets.
 *
 * | the id                                       | its key                                             |
 * | -------------------------------------------- | --------------------------------------------------- |
 * | an integer in bigint's range ("42", "-7")    | the integer itself: integer ids compare by id range |
 * | anything else (a uuid, a text, "1e3", " 7")  | the first 60 bits of md5(id), in [0, 2^60)          |
 *
 * Why: an id range serves integer ids through their primary key, but a uuid or a text has no
 * order both sides share cheaply; a hash spreads them evenly, so `tether verify` sizes buckets
 * by the row count and drills into the few that differ, as for integers. 60 bits, not 64: every
 * key fits a signed long (the engine's type) without wrapping, and collisions only put two ids
 * in one bucket, which the leaf compares id by id anyway.
 *
 * @example
 * entityKey("42");                                    // 42n
 * entityKey("0b5d3c1e-8a52-4c1e-9d0e-4b8b1b0f2a11");  // a bigint in [0, 2^60)
 */
export function entityKey(id: string): bigint {
  if (INTEGER.test(id)) {
    const n = BigInt(id);
    if (n >= LONG_MIN && n <= LONG_MAX) return n;
  }
  return BigInt(`0x${hash("md5", id, "hex").slice(0, 15)}`);
}

/** The SQL of `entityKey` over an id expression (any type: it is keyed by its text). */
export function entityKeySql(idExpr: string): string {
  return `tether.entity_key((${idExpr})::text)`;
}

/** Keys of ids that are not integers lie in [0, HASHED_KEYS_END). */
export const HASHED_KEYS_END = 2n ** 60n;

const INTEGER = /^-?[0-9]+$/;
const LONG_MIN = -(2n ** 63n);
const LONG_MAX = 2n ** 63n - 1n;
