const INT_RANGES: Record<string, [bigint, bigint]> = {
  smallint: [-(2n ** 15n), 2n ** 15n - 1n],
  integer: [-(2n ** 31n), 2n ** 31n - 1n],
  bigint: [-(2n ** 63n), 2n ** 63n - 1n],
};
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
const SAFE = /^[A-Za-z0-9_:.-]{1,200}$/;

/**
 * Canonicalises an entity id for an id column of `type`, or returns an error message. An id the
 * column cannot even compare against must never reach a query: it would fail the whole batch.
 */
export function canonicalEntityId(type: string | undefined, id: unknown): { id: string } | { error: string } {
  const text = typeof id === "number" && Number.isSafeInteger(id) ? String(id) : id;
  if (typeof text !== "string" || !SAFE.test(text)) return { error: `invalid id ${JSON.stringify(id)}` };
  const range = type ? INT_RANGES[type] : undefined;
  if (range) {
    if (!/^-?[0-9]{1,20}$/.test(text) || BigInt(text) < range[0] || BigInt(text) > range[1]) return { error: `invalid id ${JSON.stringify(id)}: ids are ${type} values` };
    return { id: BigInt(text).toString() };
  }
  if (type === "uuid") return UUID.test(text) ? { id: text.toLowerCase() } : { error: `invalid id ${JSON.stringify(id)}: ids are uuids` };
  return { id: text };
}
