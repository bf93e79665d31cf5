import { textProblem } from "@tether/core/internal";
import { HttpError } from "./http-error.js";

/** A JSON number that cannot be read exactly, kept with its source text until the walk names its path. */
class InexactNumber {
  constructor(readonly source: string) {}
}

// Strict: a body that is not UTF-8 must be refused, not decoded into U+FFFD (two different
// inputs would become the same stored value).
const utf8 = new TextDecoder("utf-8", { fatal: true, ignoreBOM: false });

function reviver(this: unknown, _key: string, value: unknown, context?: { source?: string }): unknown {
  if (typeof value !== "number") return value;
  if (!Number.isFinite(value) || (Number.isInteger(value) && !Number.isSafeInteger(value))) return new InexactNumber(context?.source ?? String(value));
  return value;
}

const at = (path: string, k: string | number) => {
  const key = k === "" ? '""' : String(k);
  return path ? `${path}.${key}` : key;
};

/** Refuses what no route may receive; returns the same value. */
function check(value: unknown, path: string): void {
  if (typeof value === "string") {
    const problem = textProblem(value);
    if (problem) throw new HttpError("validation", `${path || "body"}: ${problem}`, { field: path || "body" });
    return;
  }
  if (value instanceof InexactNumber) {
    const shown = value.source.length > 40 ? `${value.source.slice(0, 40)}…` : value.source;
    throw new HttpError("validation", `${path || "body"}: the number ${shown} cannot be read exactly (integers are exact up to 2^53-1); send large ids as strings`, { field: path || "body" });
  }
  if (Array.isArray(value)) {
    value.forEach((v, i) => check(v, at(path, i)));
    return;
  }
  if (value === null || typeof value !== "object") return;
  for (const [k, v] of Object.entries(value)) {
    const field = at(path, k);
    // The keys secure-json-parse refuses: they would reach Object.prototype through a merge.
    if (k === "__proto__" || (k === "constructor" && v !== null && typeof v === "object" && Object.hasOwn(v, "prototype"))) {
      throw new HttpError("validation", `${field}: is not allowed (prototype pollution)`, { field });
    }
    const keyProblem = textProblem(k);
    if (keyProblem) throw new HttpError("validation", `${path || "body"}: a field name ${keyProblem}`, { field: path || "body" });
    check(v, field);
  }
}

/**
 * Parses a JSON request body: strict UTF-8, then JSON, then the edge rules every route shares
 * (no NUL or lone surrogates in any string, no `__proto__` / `constructor.prototype`, no number
 * that JSON.parse would round). Each refusal is an `HttpError` naming the field. An empty body
 * parses to `undefined` (a route's schema then says the body is missing).
 *
 * @example
 * parseJsonBody(Buffer.from('{"tags":["a\\u0000"]}')); // throws HttpError validation, field "tags.0"
 */
export function parseJsonBody(raw: Buffer): unknown {
  let text: string;
  try {
    text = utf8.decode(raw);
  } catch (err) {
    throw new HttpError("invalid_json", "body: is not valid UTF-8", { field: "body", cause: err });
  }
  if (text.trim() === "") return undefined;
  let value: unknown;
  try {
    value = JSON.parse(text, reviver as (key: string, value: unknown) => unknown);
  } catch (err) {
    // The engine's message quotes the body; only say where.
    const where = /position (\d+)/.exec((err as Error).message)?.[1];
    throw new HttpError("invalid_json", `body: is not valid JSON${where ? ` (at character ${where})` : ""}`, { field: "body", cause: err });
  }
  check(value, "");
  return value;
}
