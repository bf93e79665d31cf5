import { createRequire } from "node:module";
import { Command } from "commander";
import { noteVerb } from "./cli-actor.js";

// The same relative path from src/ and dist/.
const { version } = createRequire(import.meta.url)("../package.json") as { version: string };

/** Hands a `--config` given before the verb to the verb and its own verbs, unless set there. */
function inheritConfig(cmd: Command, config: string): void {
  if (cmd.options.some((o) => o.long === "--config") && cmd.getOptionValue("config") === undefined) cmd.setOptionValue("config", config);
  for (const sub of cmd.commands) inheritConfig(sub, config);
}

/** The bare `tether` program: usage errors throw (exit 2) instead of exiting, so main decides. */
export function createProgram(): Command {
  return new Command("tether")
    .description("Tether: keep Elasticsearch consistent with Postgres — migrate, inspect, re-index and drain the job queue")
    .version(version, "-V, --version", "print the version of tether")
    // `tether --config <file> <verb>` as well as `tether <verb> --config <file>` (the verb's own
    // wins). Positional: options after the verb stay the verb's, nested verbs (`parked list`) too.
    .enablePositionalOptions()
    .option("--config <file>", "tether.config.ts to load, for any verb (default: $TETHER_CONFIG, else ./tether.config.ts)")
    .hook("preSubcommand", (program, verb) => {
      const config = program.opts<{ config?: string }>().config;
      if (config !== undefined) inheritConfig(verb, config);
    })
    // A refused privilege names the verb (`tether rebuild needs the index privilege …`).
    .hook("preAction", (_program, action) => noteVerb(action))
    .exitOverride()
    .showHelpAfterError("(run with --help for usage)")
    .configureOutput({ writeErr: (s) => process.stderr.write(s) });
}
