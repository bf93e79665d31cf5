import { ValidationError } from "@tether/core";

/** A bulk action's target: either `ids`, or `all: true` with an optional filter (empty: everything). */
export interface SelectionBody<F> {
  ids?: string[];
  all?: true;
  filter?: F;
}

/** Checks that exactly one of ids and all is given, naming the field that is wrong. */
export function selection<F extends object>(b: SelectionBody<F>): { ids?: string[]; filter: F | Record<string, never> } {
  if ((b.ids === undefined) === (b.all !== true)) throw new ValidationError("ids", "give either ids or all: true (with an optional filter)");
  if (b.ids !== undefined && b.filter !== undefined) throw new ValidationError("filter", "applies only with all: true");
  return { ...(b.ids ? { ids: b.ids } : {}), filter: b.filter ?? {} };
}
