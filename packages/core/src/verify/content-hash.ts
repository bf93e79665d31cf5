import { hash } from "node:crypto";

const byCodeUnit = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);
/** Keys JavaScript enumerates before all others, in numeric order: a sorted copy cannot hold them in code-unit order. */
const INDEX_KEY = /^(?:0|[1-9]\d*)$/;

class IndexKeyFound extends Error {}

/**
 * A copy of `value` with every object's keys inserted in code-unit order and `undefined` members
 * dropped, so one native `JSON.stringify` prints canonical JSON. Throws IndexKeyFound for an
 * object with an integer-like key (enumerated first whatever the insertion order).
 */
function sortedCopy(value: unknown): unknown {
  if (value === null || typeof value !== "object") return value;
  if (Array.isArray(value)) return value.map(sortedCopy);
  // toJSON (a Date) as JSON.stringify sees it.
  if (typeof (value as { toJSON?: unknown }).toJSON === "function") return sortedCopy((value as { toJSON: () => unknown }).toJSON());
  const record = value as Record<string, unknown>;
  const keys = Object.keys(record).sort(byCodeUnit);
  // No prototype: a "__proto__" key is a member like any other.
  const out = Object.create(null) as Record<string, unknown>;
  for (const k of keys) {
    if (INDEX_KEY.test(k)) throw new IndexKeyFound();
    const v = record[k];
    if (v !== undefined) out[k] = sortedCopy(v);
  }
  return out;
}

/** Canonical JSON, one member at a time: the general case, for objects with integer-like keys. */
function canonical(value: unknown): string {
  if (value === null || typeof value !== "object") return JSON.stringify(value) ?? "null";
  if (Array.isArray(value)) return `[${value.map(canonical).join(",")}]`;
  if (typeof (value as { toJSON?: unknown }).toJSON === "function") return canonical((value as { toJSON: () => unknown }).toJSON());
  const entries = Object.entries(value as Record<string, unknown>)
    .filter(([, v]) => v !== undefined)
    .sort(([a], [b]) => byCodeUnit(a, b));
  return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${canonical(v)}`).join(",")}}`;
}

function canonicalJson(document: Record<string, unknown>): string {
  try {
    return JSON.stringify(sortedCopy(document));
  } catch (err) {
    if (err instanceof IndexKeyFound) return canonical(document);
    throw err;
  }
}

/**
 * A hash of a document's content: canonical JSON (keys sorted at every depth, `undefined`
 * dropped, as JSON drops it) → the first 16 hex digits of its md5. A sink stores it with every
 * document it writes (`tether.content`), and `tether verify --deep` compares it with the hash of
 * the document rebuilt from the row and of the body the engine holds.
 *
 * @example
 * contentHash({ b: 1, a: [1, { y: 2, x: 1 }] }) === contentHash({ a: [1, { x: 1, y: 2 }], b: 1 }); // true
 */
export function contentHash(document: Record<string, unknown>): string {
  return hash("md5", canonicalJson(document), "hex").slice(0, 16);
}
