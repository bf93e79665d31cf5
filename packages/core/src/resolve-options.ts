import { ValidationError } from "./errors.js";

/** What a value of one option must be. */
export type OptionRule = "positive integer" | "non-negative integer" | "positive number" | "non-negative number" | "fraction" | "boolean" | "non-empty string";

/** For each option of `T`: its default and its rule (or the list of its allowed values). The single place a component's defaults are written. */
export type OptionDefaults<T> = { readonly [K in keyof T]-?: readonly [defaultValue: Exclude<T[K], undefined>, rule: OptionRule | readonly string[]] };

export type ResolvedOptions<T> = { -readonly [K in keyof T]-?: Exclude<T[K], undefined> };

const checks: Record<OptionRule, (v: unknown) => boolean> = {
  "positive integer": (v) => Number.isSafeInteger(v) && (v as number) > 0,
  "non-negative integer": (v) => Number.isSafeInteger(v) && (v as number) >= 0,
  "positive number": (v) => typeof v === "number" && Number.isFinite(v) && v > 0,
  "non-negative number": (v) => typeof v === "number" && Number.isFinite(v) && v >= 0,
  fraction: (v) => typeof v === "number" && v >= 0 && v <= 1,
  boolean: (v) => typeof v === "boolean",
  "non-empty string": (v) => typeof v === "string" && v.length > 0,
};

/**
 * Fills every absent option with its default and validates every value once, at construction,
 * throwing a `ValidationError` that names the option. Components call it with their own
 * `OptionDefaults` table, which is where their defaults are documented and set.
 *
 * @example
 * const DEFAULTS: OptionDefaults<{ batchSize?: number }> = { batchSize: [2500, "positive integer"] };
 * resolveOptions(DEFAULTS, { batchSize: 0 }); // throws ValidationError: batchSize must be a positive integer, got 0
 */
export function resolveOptions<T extends object>(defaults: OptionDefaults<T>, given: T | undefined): ResolvedOptions<T> {
  const out: Record<string, unknown> = {};
  for (const [key, [fallback, rule]] of Object.entries(defaults) as [string, readonly [unknown, OptionRule | readonly string[]]][]) {
    const v = (given as Record<string, unknown> | undefined)?.[key] ?? fallback;
    if (typeof rule !== "string") {
      if (!rule.includes(v as string)) throw new ValidationError(key, `must be one of ${rule.join(", ")}, got ${String(v)}`);
    } else if (!checks[rule](v)) throw new ValidationError(key, `must be a ${rule}, got ${String(v)}`);
    out[key] = v;
  }
  return out as ResolvedOptions<T>;
}
