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
 * Env: DATABASE_URL (required), TETHER_SINK (elasticsearch, default, or opensearch),
 * ELASTICSEARCH_URL (default http://127.0.0.1:9200) or OPENSEARCH_URL (default http://127.0.0.1:9201)
 * and the engine's other connection variables (docs/connecting.md), handed with
 * TETHER_INDEX_PREFIX (default "") to the config's sink factory, LOG_LEVEL (diagnostics on
 * stderr, default warn).
 * Exit codes: 0 ok, 1 the verb failed, 2 bad usage, a bad config or a bad connection setting, 3 `drain --until-empty` left work only an
 * operator can unblock (parked, paused, failing), 4 `drain --until-empty` hit its --timeout.
 * Under --json a failure is also one JSON document on stdout: `{ "error": { code, message, exitCode } }`
 * (a refused privilege: `code: "forbidden"` with `privilege` and `index`).
 *
 * Each verb lives in ./commands/<verb>.ts and is registered below with one line.
 */
import { outputWritten } from "./command-kit.js";
import { describeCliError } from "./describe-cli-error.js";
import { loadCliEnv } from "./env.js";
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
import { registerPurgeTombstones } from "./commands/purge-tombstones.js";
import { registerRebuild } from "./commands/rebuild.js";
import { registerTrace } from "./commands/trace.js";
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
registerPurgeTombstones(program);
registerRebuild(program);
registerTrace(program);

try {
  await program.parseAsync(process.argv);
} catch (err) {
  const env = loadCliEnv();
  const opensearch = env.TETHER_SINK === "opensearch";
  const report = describeCliError(err, {
    databaseUrl: env.DATABASE_URL,
    elasticsearchUrl: opensearch ? env.OPENSEARCH_URL : env.ELASTICSEARCH_URL || (env.source.ELASTICSEARCH_CLOUD_ID ? `cloud id ${env.source.ELASTICSEARCH_CLOUD_ID.split(":")[0]}` : undefined),
    engine: opensearch ? "OpenSearch" : "Elasticsearch",
  });
  // Commander has already printed its own usage errors, help and version.
  const fromCommander = (err as { code?: unknown }).code;
  const commanderSpoke = typeof fromCommander === "string" && fromCommander.startsWith("commander.");
  if (!commanderSpoke) process.stderr.write(`tether: ${report.message}\n`);
  // A verb that already printed its JSON document carries the outcome in it.
  if (process.argv.includes("--json") && !outputWritten() && report.exitCode !== 0) process.stdout.write(`${JSON.stringify({ error: report }, null, 2)}\n`);
  process.exitCode = report.exitCode;
}
