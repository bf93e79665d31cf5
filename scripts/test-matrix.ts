/**
 * The compatibility matrix: the sink conformance suite, the per-engine scenarios and the history
 * tester's fixed seed on every combination of engine major and Postgres major worth running
 * (test/matrix/matrix-combinations.ts), each a vitest run of its own against real servers.
 * Prints a table of combination → result and duration, and ends with "N passed, N failed"
 * (combinations). Exit 0 only when every combination passed.
 *
 *   scripts/test-matrix [--only es9-pg15,os3-pg18] [--list] [--json]
 *
 * Servers: the usual majors from DATABASE_URL / ELASTICSEARCH_URL / OPENSEARCH_URL (else
 * provisioned as `scripts/services up` does); the others on their majors' own ports, reused when
 * already up, else started for the run and stopped after the last combination that needs them.
 * Each combination's vitest output is in .cache/test-matrix/<combination>.log.
 */
import { testMatrixMain } from "./long-runs/src/test-matrix-main.js";

process.exitCode = await testMatrixMain(process.argv.slice(2)).catch((err: unknown) => {
  console.error(`test-matrix: ${err instanceof Error ? err.message : String(err)}`);
  return 2;
});
