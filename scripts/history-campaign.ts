/**
 * The history tester's long campaign: random seeded histories of writes, plain SQL, faults,
 * drainers (one SIGKILLed) and operator verbs, each checked for convergence; every divergence
 * is shrunk to a minimal history and printed with its seed and replay command. See
 * docs/history-tester.md.
 *
 *   scripts/history-campaign [--operations 100000] [--seed N] [--sink elasticsearch|opensearch]
 *                            [--max-commands 200] [--narrow-ids] [--skip-version-check] [--json]
 *
 * How long: CPU-bound (mostly the `tether` processes a history starts). On a shared 2-core
 * machine one campaign ran 110-330 operations a minute: 30,000 operations take 1.5-4.5 hours,
 * less split over processes side by side (one per engine) or over runs on one commit.
 * The shell wrapper builds first and starts each history's `tether` processes from the built bin
 * (TETHER_HISTORY_CLI=built). Ctrl-C prints the report of the histories that ended. Uses
 * DATABASE_URL and ELASTICSEARCH_URL / OPENSEARCH_URL when
 * set, else the provisioned services; makes a database per history and drops it. Exit 1 when a
 * history diverged.
 */
import { historyCampaignMain } from "./long-runs/src/history-campaign-main.js";

process.exitCode = await historyCampaignMain(process.argv.slice(2));
