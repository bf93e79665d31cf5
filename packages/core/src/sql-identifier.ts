import { createHash } from "node:crypto";
import { ValidationError } from "./errors.js";

const IDENT = /^[a-z_][a-z0-9_]*(\.[a-z_][a-z0-9_]*)?$/;
const PLAIN = /^[a-z_][a-z0-9_]*$/;

/** A plain lower-case SQL identifier, optionally schema-qualified; throws a ValidationError naming `field`. */
export function sqlIdentifier(field: string, value: string): string {
  if (typeof value !== "string" || !IDENT.test(value)) throw new ValidationError(field, `"${String(value)}" is not a plain lower-case SQL identifier`);
  return value;
}

/** A plain lower-case column name (never schema-qualified); throws a ValidationError naming `field`. */
export function columnIdentifier(field: string, value: string): string {
  if (typeof value !== "string" || !PLAIN.test(value)) throw new ValidationError(field, `"${String(value)}" is not a plain lower-case column name`);
  return value;
}

/** Postgres cuts identifiers at 63 bytes: a longer name keeps its head and ends with a hash of the whole. */
export function boundedIdentifier(name: string): string {
  if (Buffer.byteLength(name) <= 63) return name;
  return `${name.slice(0, 54)}_${createHash("md5").update(name).digest("hex").slice(0, 8)}`;
}
