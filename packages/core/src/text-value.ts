/**
 * Text Tether stores must be text Postgres can hold and hand back unchanged. Refused, never
 * normalised: NUL (Postgres `text` cannot hold it: SQLSTATE 22021) and lone UTF-16 surrogates
 * (they have no UTF-8 form, so the driver would write U+FFFD and two different inputs would
 * become the same value). Invalid UTF-8 bytes are refused where bytes are decoded (the HTTP
 * body parser).
 */
// A high surrogate not followed by a low one, or a low one not preceded by a high one.
const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

/** What is wrong with `s` as stored text, or undefined when it is fine. */
export function textProblem(s: string): string | undefined {
  if (s.includes("\u0000")) return "must not contain the NUL character (U+0000)";
  if (LONE_SURROGATE.test(s)) return "must be valid Unicode (it contains a lone UTF-16 surrogate)";
  return undefined;
}

/**
 * The path of the first string (value or key) in a JSON-like value that breaks `textProblem`,
 * with the problem; `prefix` names the root ("body", "query").
 *
 * @example
 * findTextProblem({ tags: ["ok", "a\u0000"] }, "body"); // { field: "tags.1", problem: "must not contain …" }
 */
export function findTextProblem(value: unknown, prefix = ""): { field: string; problem: string } | undefined {
  // An empty key still needs a visible name in a field path.
  const at = (k: string | number) => {
    const key = k === "" ? '""' : String(k);
    return prefix ? `${prefix}.${key}` : key;
  };
  if (typeof value === "string") {
    const problem = textProblem(value);
    return problem ? { field: prefix || "body", problem } : undefined;
  }
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) {
      const found = findTextProblem(value[i], at(i));
      if (found) return found;
    }
    return undefined;
  }
  if (value !== null && typeof value === "object") {
    for (const [k, v] of Object.entries(value)) {
      const keyProblem = textProblem(k);
      if (keyProblem) return { field: prefix || "body", problem: `has a field name that ${keyProblem}` };
      const found = findTextProblem(v, at(k));
      if (found) return found;
    }
  }
  return undefined;
}
