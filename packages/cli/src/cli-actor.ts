import type { Command } from "commander";
import type { RefusalActor } from "@tether/core";

/** The role docs/connecting.md gives every CLI verb (and the drainer). */
export const CLI_ROLE = "tether_drainer";

let verb = "tether";

/** Remembers the verb about to run (`tether parked list`): a refused privilege names it. */
export function noteVerb(action: Command): void {
  const names: string[] = [];
  for (let c: Command | null = action; c; c = c.parent) names.unshift(c.name());
  verb = names.join(" ");
}

/** Who the CLI is to the engine: the verb running, under the drainer's role. */
export function cliActor(): RefusalActor {
  return { verb, role: CLI_ROLE };
}
