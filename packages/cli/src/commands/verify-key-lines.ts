import type { VerifyKeyWarning } from "@tether/core/internal";

/** The verify-key warnings as `tether status` and `tether migrate` print them: one line each, with what to run. */
export function verifyKeyLines(warnings: readonly VerifyKeyWarning[]): string[] {
  if (warnings.length === 0) return [];
  return ["", "verify needs:", ...warnings.map((w) => `  ${w.message}`)];
}
