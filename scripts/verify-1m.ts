/**
 * Measures `tether verify` on a large collection: loads N annotations (one INSERT … SELECT
 * generate_series), indexes them through the sink's bulk path, injects a little drift behind
 * tether's back, then runs the real CLI under /usr/bin/time -v (wall time, peak RSS).
 *
 *   node --conditions=source --import tsx scripts/verify-1m.ts [--rows 1000000] [--drift 30] [--keep]
 *
 * Uses DATABASE_URL / ELASTICSEARCH_URL when set, else the provisioned services; its own
 * database and index prefix are dropped afterwards unless --keep.
 */
import { millionMain } from "./long-runs/src/million-main.js";

process.exitCode = await millionMain(process.argv.slice(2));
