/**
 * The history tester's long campaign: random seeded histories of writes, plain SQL, faults,
 * drainers (one SIGKILLed) and operator verbs, each checked for convergence; every divergence
 * is shrunk to a minimal history and printed with its seed and replay command. See
 * docs/history-tester.md.
 *
 *   scripts/history-campaign [--operations 100000] [--seed N] [--sink elasticsearch|opensearch]
 *                            [--max-commands 40] [--narrow-ids] [--skip-version-check] [--json]
 *
 * How long: on a busy 2-core machine a history costs about 10 s of fixed work (its database,
 * two `tether` processes) plus 50-100 ms per operation, and runs half of --max-commands on
 * average: 100,000 operations take roughly 12-15 hours at the default 40, a few hours with
 * --max-commands 200. Uses DATABASE_URL and ELASTICSEARCH_URL / OPENSEARCH_URL when
 * set, else the provisioned services; makes a database per history and drops it. Exit 1 when a
 * history diverged.
 */
import { historyCampaignMain } from "./long-runs/src/history-campaign-main.js";

process.exitCode = await historyCampaignMain(process.argv.slice(2));
