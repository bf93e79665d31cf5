import type { ConfigWarning } from "@tether/core";

/** The lines `tether migrate` and `tether status` print for what in the config works but will cost (never a failure). */
export function configWarningLines(warnings: readonly ConfigWarning[]): string[] {
  return warnings.map((w) => `warning: ${w.file}: ${w.field}: ${w.message}`);
}
