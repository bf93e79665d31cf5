/**
 * Soak: sustained writes through the API with the drainer running while Elasticsearch flaps
 * (hang, refuse, 429, 503, 200 OK with dropped items, cut responses, latency), then heal,
 * drain until empty, and count lost / stale / duplicate documents. Stops by itself.
 *
 *   scripts/soak [--minutes 2] [--concurrency 4] [--keep] [--json]
 *
 * Uses DATABASE_URL / ELASTICSEARCH_URL when set, else the provisioned services; creates its
 * own database and index prefix and drops them afterwards (unless --keep). Exit 1 if anything
 * was lost.
 */
import { soakMain } from "./long-runs/src/soak-main.js";

process.exitCode = await soakMain(process.argv.slice(2));
