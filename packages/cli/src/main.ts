#!/usr/bin/env node
/**
 * `tether` — the operator CLI.
 *
 * From a checkout, without building:
 *   node --conditions=source --import tsx packages/cli/src/main.ts <verb> [options]
 * Built: `pnpm build`, then `node packages/cli/dist/main.js <verb>` (the package's `tether` bin).
 *
 * Every verb loads tether.config.ts (`--config <file>`, else TETHER_CONFIG, else
 * ./tether.config.ts): the collections, the sink and the options.
 * Env: DATABASE_URL (required), ELASTICSEARCH_URL and TETHER_INDEX_PREFIX (handed to the config's
 * sink factory), LOG_LEVEL (diagnostics on stderr, default warn).
 * Exit codes: 0 ok, 1 the verb failed, 2 bad usage.
 *
 * Each verb lives in ./commands/<verb>.ts and is registered below with one line.
 */
import { describeCliError, exitCodeOf } from "./cli-errors.js";
import { registerAdopt } from "./commands/adopt.js";
import { registerAlerts } from "./commands/alerts.js";
import { registerCapture } from "./commands/capture.js";
import { registerDrain } from "./commands/drain.js";
import { registerMigrate } from "./commands/migrate.js";
import { registerParked } from "./commands/parked.js";
import { registerPause, registerResume } from "./commands/pause.js";
import { registerReindex } from "./commands/reindex.js";
import { registerStatus } from "./commands/status.js";
import { registerVerify } from "./commands/verify.js";
import { createProgram } from "./program.js";

const program = createProgram();
registerMigrate(program);
registerStatus(program);
registerVerify(program);
registerReindex(program);
registerDrain(program);
registerParked(program);
registerAlerts(program);
registerPause(program);
registerResume(program);
registerCapture(program);
registerAdopt(program);

try {
  await program.parseAsync(process.argv);
} catch (err) {
  const code = exitCodeOf(err);
  // Commander has already printed its own usage errors and help.
  const fromCommander = (err as { code?: unknown }).code;
  if (!(typeof fromCommander === "string" && fromCommander.startsWith("commander."))) {
    process.stderr.write(`tether: ${describeCliError(err)}\n`);
  }
  process.exitCode = code;
}
