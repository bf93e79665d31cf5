/**
 * The id types a collection can declare (`CollectionOptions.idType`). Integer ids are positive:
 * identity and serial columns never hand out 0 or negatives, so such an id can only be a typo
 * (or an attack) and must not turn into a job.
 */
export type EntityIdType = "smallint" | "integer" | "bigint" | "uuid" | "text";

export const ENTITY_ID_TYPES: readonly EntityIdType[] = ["smallint", "integer", "bigint", "uuid", "text"];

const INT_MAX: Record<string, bigint> = {
  smallint: 2n ** 15n - 1n,
  integer: 2n ** 31n - 1n,
  bigint: 2n ** 63n - 1n,
};
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
// Text ids travel in URLs, kwargs and document ids: a conservative alphabet, no NUL, no spaces.
const SAFE = /^[A-Za-z0-9_:.-]{1,200}$/;

/** Quotes a rejected id for a message without echoing a megabyte of it back. */
function quote(id: unknown): string {
  const s = typeof id === "string" ? id : typeof id === "number" || typeof id === "bigint" ? String(id) : typeof id;
  return JSON.stringify(s.length > 40 ? `${s.slice(0, 40)}…` : s);
}

/**
 * The one id rule of Tether, used wherever an entity id arrives: URL paths, re-index id lists,
 * job kwargs. Returns the canonical text of the id for an id column of `type`, or a message
 * saying what is wrong. Integer ids are decimal digits (or a JSON safe integer) in
 * 1..max of the type; uuids are canonicalised to lower case; text ids use `[A-Za-z0-9_:.-]`.
 * An id the column cannot compare against must never reach a query: it would fail the batch.
 *
 * @example
 * canonicalEntityId("bigint", "007");  // { id: "7" }
 * canonicalEntityId("bigint", "-5");   // { error: 'invalid id "-5": ids are bigint values in 1..9223372036854775807' }
 */
export function canonicalEntityId(type: string | undefined, id: unknown): { id: string } | { error: string } {
  if (typeof id === "number" && !Number.isSafeInteger(id)) {
    // JSON.parse already rounded it: echoing it would show a different id than the one sent.
    return { error: "invalid id: a number beyond 2^53-1 (or not an integer) cannot be an exact id; send ids as strings" };
  }
  const text = typeof id === "number" ? String(id) : id;
  if (typeof text !== "string" || !SAFE.test(text)) return { error: `invalid id ${quote(id)}` };
  const max = type ? INT_MAX[type] : undefined;
  if (max !== undefined) {
    if (!/^[0-9]{1,20}$/.test(text) || BigInt(text) < 1n || BigInt(text) > max) return { error: `invalid id ${quote(id)}: ids are ${type} values in 1..${max}` };
    return { id: BigInt(text).toString() };
  }
  if (type === "uuid") return UUID.test(text) ? { id: text.toLowerCase() } : { error: `invalid id ${quote(id)}: ids are uuids` };
  return { id: text };
}
