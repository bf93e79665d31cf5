/**
 * A Postgres array literal of text values, sent as one parameter cast to an array type: one
 * join instead of the driver's escaping of every element (a drain pass sends thousands of ids
 * per statement). Every element is quoted, so commas, braces, blanks and the word NULL stay text.
 */
export function arrayLiteral(values: readonly string[]): string {
  if (values.length === 0) return "{}";
  if (!/["\\]/.test(values.join(""))) return `{"${values.join('","')}"}`;
  return `{${values.map((v) => `"${v.replace(/["\\]/g, "\\$&")}"`).join(",")}}`;
}
