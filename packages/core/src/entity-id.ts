import { textProblem } from "./text-value.js";

/**
 * The id rule: one pure decision, applied wherever an entity id arrives (the writer before
 * COMMIT, job kwargs in the drainer, re-index id lists, URL paths, the console's trace, deep
 * verify). An id is either synced exactly as the rule's canonical text, or refused with a
 * message naming it. Nothing in between: an id the writer accepts is an id the drainer syncs.
 *
 * | id column type            | the id                                                  | decision                                            |
 * | ------------------------- | ------------------------------------------------------- | --------------------------------------------------- |
 * | smallint, integer, bigint | decimal digits (or a JSON safe integer) in 1..max        | synced as its canonical decimal ("007" → "7")       |
 * | smallint, integer, bigint | 0, negative, past the type's max, sign, fraction, spaces | refused: not an id of the type                      |
 * | uuid                      | a uuid, any case                                         | synced in lower case                                |
 * | uuid                      | anything else                                            | refused: not a uuid                                 |
 * | text (and any other type) | 1..512 bytes of UTF-8, any characters but NUL            | synced exactly as is ("jane.doe@example.com", "HD 7", "Zoë 東京") |
 * | text (and any other type) | empty                                                    | refused: an engine `_id` cannot be empty            |
 * | text (and any other type) | more than 512 bytes of UTF-8                             | refused: the engine's `_id` holds at most 512 bytes |
 * | any                       | contains NUL, or a lone UTF-16 surrogate                 | refused: Postgres cannot hold it unchanged          |
 * | any                       | a number past 2^53-1 or not an integer                   | refused: JSON already rounded it                    |
 * | any                       | neither a string nor a number                            | refused                                             |
 *
 * Where the id travels (`ID_ENCODINGS`): Elasticsearch and OpenSearch both take any non-empty
 * text of at most 512 bytes as `_id` raw (the sink conformance suite pins it), so the document id
 * IS the canonical id: verify, the trace, orphan removal and rebuild read it back without
 * decoding. Job kwargs hold it as a jsonb string (any text but NUL). A URL path segment carries it
 * percent-encoded (`encodeURIComponent`), except "." and "..", which URL parsers resolve as path
 * steps even when percent-encoded: the console's trace takes the id as a query parameter.
 *
 * Rows written by plain SQL (capture) are not refused by the writer: an id outside the rule
 * reaches the drainer, which parks its job with this rule's message (`malformed kwargs: kwargs.id:
 * …`), never syncing part of a batch. A CHECK constraint refuses it at the source (docs: "Ids").
 */
export type EntityIdType = "smallint" | "integer" | "bigint" | "uuid" | "text";

export const ENTITY_ID_TYPES: readonly EntityIdType[] = ["smallint", "integer", "bigint", "uuid", "text"];

/** The engines' limit on a document `_id`, in bytes of UTF-8. */
export const MAX_ID_BYTES = 512;

/** How the canonical id travels to each place it goes (see the module's header). */
export const ID_ENCODINGS = {
  engineId: "raw",
  jobKwargs: "raw",
  urlPath: "percent-encoded; '.' and '..' only as a query parameter",
} as const;

const INT_MAX: Record<string, bigint> = {
  smallint: 2n ** 15n - 1n,
  integer: 2n ** 31n - 1n,
  bigint: 2n ** 63n - 1n,
};
/** A canonical decimal of at most 15 digits: exact as a Number, so its bound is checked without BigInt. */
const SHORT_CANONICAL_INT = /^[1-9][0-9]{0,14}$/;
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** Quotes a rejected id for a message without echoing a megabyte of it back. */
function quote(id: unknown): string {
  if (typeof id !== "string" && typeof id !== "number" && typeof id !== "bigint") return JSON.stringify(typeof id);
  const s = String(id);
  // Slice by code point, so the quote never ends in half a surrogate pair.
  const points = [...s];
  return JSON.stringify(points.length > 40 ? `${points.slice(0, 40).join("")}…` : s);
}

/** The id's class of column: integer types compare as numbers, uuids as uuids, anything else as text. */
export function idTypeClass(type: string | undefined): "integer" | "uuid" | "text" {
  if (type !== undefined && INT_MAX[type] !== undefined) return "integer";
  return type === "uuid" ? "uuid" : "text";
}

/**
 * The one id rule of Tether: the canonical text of `id` for an id column of `type` (its SQL type,
 * e.g. "bigint", "text", "character varying(64)"; undefined reads as text), or a message naming
 * the id and what is wrong. See the table in this module's header.
 *
 * @example
 * canonicalEntityId("bigint", "007");                // { id: "7" }
 * canonicalEntityId("text", "jane.doe@example.com"); // { id: "jane.doe@example.com" }
 * canonicalEntityId("bigint", "-5");   // { error: 'invalid id "-5": ids are bigint values in 1..9223372036854775807' }
 */
export function canonicalEntityId(type: string | undefined, id: unknown): { id: string } | { error: string } {
  if (typeof id === "number" && !Number.isSafeInteger(id)) {
    // JSON.parse already rounded it: echoing it would show a different id than the one sent.
    return { error: "invalid id: a number beyond 2^53-1 (or not an integer) cannot be an exact id; send ids as strings" };
  }
  const text = typeof id === "number" ? String(id) : id;
  if (typeof text !== "string") return { error: `invalid id ${quote(id)}: ids are strings` };
  // The common case of an integer column (every job of a drain pass asks): already canonical.
  if (type !== undefined && INT_MAX[type] !== undefined && SHORT_CANONICAL_INT.test(text) && Number(text) <= Number(INT_MAX[type])) return { id: text };
  const problem = textProblem(text);
  if (problem) return { error: `invalid id ${quote(id)}: an id ${problem}` };
  const cls = idTypeClass(type);
  if (cls === "integer") {
    const max = INT_MAX[type!]!;
    if (!/^[0-9]{1,20}$/.test(text) || BigInt(text) < 1n || BigInt(text) > max) return { error: `invalid id ${quote(id)}: ids are ${type} values in 1..${max}` };
    return { id: BigInt(text).toString() };
  }
  if (cls === "uuid") return UUID.test(text) ? { id: text.toLowerCase() } : { error: `invalid id ${quote(id)}: ids are uuids` };
  if (text.length === 0) return { error: `invalid id "": an id cannot be empty (the engine's document _id cannot)` };
  const bytes = Buffer.byteLength(text, "utf8");
  if (bytes > MAX_ID_BYTES) return { error: `invalid id ${quote(id)}: it is ${bytes} bytes of UTF-8; the engine's document _id holds at most ${MAX_ID_BYTES}` };
  return { id: text };
}
