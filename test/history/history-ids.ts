import fc from "fast-check";
import type { IdKind } from "./history-domain.js";

/**
 * The text ids a history draws from. `WIDE_TEXT_IDS`, the default, is the whole alphabet the id
 * rule syncs (`@`, `/`, spaces, non-ASCII, up to the engine's 512-byte limit); `SAFE_TEXT_IDS`
 * (`[A-Za-z0-9_:.-]`, at most 200 characters) narrows a run to plain ids, with
 * TETHER_HISTORY_WIDE_IDS=0 (or `wideIds: false` in the runner).
 */
export interface TextIdAlphabet {
  /** Characters ids are made of (code points, so non-ASCII stays whole). */
  chars: readonly string[];
  /** The longest id, in UTF-8 bytes; the pool always holds one id of exactly this size. */
  maxBytes: number;
}

const range = (from: string, to: string) => Array.from({ length: to.charCodeAt(0) - from.charCodeAt(0) + 1 }, (_, i) => String.fromCharCode(from.charCodeAt(0) + i));

export const SAFE_TEXT_IDS: TextIdAlphabet = {
  chars: [...range("A", "Z"), ...range("a", "z"), ...range("0", "9"), "_", ":", ".", "-"],
  maxBytes: 200,
};

export const WIDE_TEXT_IDS: TextIdAlphabet = {
  chars: [...SAFE_TEXT_IDS.chars, "@", "/", " ", "#", "?", "%", "+", "&", "é", "ß", "中", "文", "😀", "\u00a0"],
  maxBytes: 512,
};

/** How many ids of each kind a history shares between its commands (few: they must collide). */
export const POOL_SIZE = 5;

export type IdPools = Record<IdKind, string[]>;

/** An id of exactly `bytes` UTF-8 bytes from the alphabet's one-byte characters, led by a multi-byte one when it has some. */
function edgeId(alphabet: TextIdAlphabet, seedChar: string): string {
  const wide = alphabet.chars.find((c) => Buffer.byteLength(c) > 1);
  const head = wide ?? seedChar;
  return head + "x".repeat(alphabet.maxBytes - Buffer.byteLength(head));
}

const textId = (alphabet: TextIdAlphabet) =>
  fc.array(fc.constantFrom(...alphabet.chars), { minLength: 1, maxLength: 12 }).map((cs) => cs.join("")).filter((s) => s.trim() === s || alphabet !== SAFE_TEXT_IDS);

/**
 * The ids of one history: small bigints with the type's maximum, uuids, and text ids with the
 * longest one the alphabet allows. Commands name ids by slot, so a history shrinks without
 * losing its collisions.
 */
export function idPools(alphabet: TextIdAlphabet): fc.Arbitrary<IdPools> {
  return fc.record({
    bigint: fc.constant(["1", "2", "3", "4", "9223372036854775807"]),
    uuid: fc.uniqueArray(fc.uuid({ version: 4 }), { minLength: POOL_SIZE, maxLength: POOL_SIZE }),
    text: fc
      .uniqueArray(textId(alphabet), { minLength: POOL_SIZE - 1, maxLength: POOL_SIZE - 1 })
      .map((ids) => [...ids, edgeId(alphabet, "k")])
      .filter((ids) => new Set(ids).size === ids.length),
  });
}
