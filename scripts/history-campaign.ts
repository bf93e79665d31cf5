/**
 * The history tester's long campaign: random seeded histories of writes, plain SQL, faults,
 * drainers (one SIGKILLed) and operator verbs, each checked for convergence; every divergence
 * is shrunk to a minimal history and printed with its seed and replay command. See
 * docs/history-tester.md.
 *
 *   scripts/history-campaign [--operations 100000] [--seed N] [--sink elasticsearch|opensearch]
 *                            [--max-commands 40] [--narrow-ids] [--skip-version-check] [--json]
 *
 * How long: two campaigns side by side (one per engine) on a shared 2-core machine ran about 185
 * operations a minute each at --max-commands 200: 100,000 operations take about 4.5 hours there.
 * The shell wrapper builds first and starts each history's `tether` processes from the built bin
 * (TETHER_HISTORY_CLI=built). Ctrl-C prints the report of the histories that ended. Uses
 * DATABASE_URL and ELASTICSEARCH_URL / OPENSEARCH_URL when
 * set, else the provisioned services; makes a database per history and drops it. Exit 1 when a
 * history diverged.
 */
import { historyCampaignMain } from "./long-runs/src/history-campaign-main.js";

process.exitCode = await historyCampaignMain(process.argv.slice(2));
