import { createHash } from "node:crypto";

function canonical(value: unknown): string {
  if (value === null || typeof value !== "object") return JSON.stringify(value) ?? "null";
  if (Array.isArray(value)) return `[${value.map(canonical).join(",")}]`;
  const entries = Object.entries(value as Record<string, unknown>)
    .filter(([, v]) => v !== undefined)
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${canonical(v)}`).join(",")}}`;
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
  return createHash("md5").update(canonical(document)).digest("hex").slice(0, 16);
}
