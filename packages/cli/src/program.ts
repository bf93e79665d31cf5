import { createRequire } from "node:module";
import { Command } from "commander";

// The same relative path from src/ and dist/.
const { version } = createRequire(import.meta.url)("../package.json") as { version: string };

/** The bare `tether` program: usage errors throw (exit 2) instead of exiting, so main decides. */
export function createProgram(): Command {
  return new Command("tether")
    .description("Tether: keep Elasticsearch consistent with Postgres — migrate, inspect, re-index and drain the job queue")
    .version(version, "-V, --version", "print the version of tether")
    .exitOverride()
    .showHelpAfterError("(run with --help for usage)")
    .configureOutput({ writeErr: (s) => process.stderr.write(s) });
}
