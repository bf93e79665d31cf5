import { hash } from "node:crypto";

/**
 * A 28-bit hash of (id, version), stored in every document and computed identically in SQL
 * (see `entityHashSql`), so anti-entropy can compare per-bucket sums without moving ids.
 * 28 bits keeps a sum over 16M entities exact in a double. A sink stores it with each document
 * and sums it in `summarize`.
 *
 * @example
 * const meta = { version, hash: entityHash(op.id, op.version) }; // written beside the document
 */
export function entityHash(id: string, version: number | bigint | string): number {
  const hex = hash("md5", `${id}:${version}`, "hex");
  return parseInt(hex.slice(0, 7), 16);
}

/** SQL expression of `entityHash` over an id and a version column expression. */
export function entityHashSql(idExpr: string, versionExpr: string): string {
  return `(('x' || substr(md5((${idExpr})::text || ':' || (${versionExpr})::text), 1, 7))::bit(28)::int)`;
}
