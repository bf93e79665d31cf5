import type { Benchmark } from "../benchmark.js";
import { queueThroughput } from "./queue-throughput.js";
import { reindexDrain } from "./reindex-drain.js";
import { verifyDrain } from "./verify-drain.js";
import { writePath } from "./write-path.js";
import { adminEnqueue } from "./admin-enqueue.js";
import { claimLatency } from "./claim-latency.js";
import { backlogRecovery } from "./backlog-recovery.js";
import { apiLatency } from "./api-latency.js";
import { captureOverhead } from "./capture-overhead.js";
import { adoptLive } from "./adopt-live.js";
import { entityEvents } from "./entity-events.js";
import { apiLoad } from "./api-load.js";
import { verifyDeep } from "./verify-deep.js";
import { rebuild } from "./rebuild.js";
import { authorEmbed } from "./author-embed.js";
import { fanout } from "./fanout.js";
import { verifyScale } from "./verify-scale.js";
import { restore } from "./restore.js";

/** In the order they run. */
export const BENCHMARKS: Benchmark[] = [queueThroughput, reindexDrain, verifyDrain, verifyDeep, rebuild, writePath, adminEnqueue, claimLatency, backlogRecovery, apiLatency, apiLoad, captureOverhead, adoptLive, entityEvents, authorEmbed, fanout, verifyScale, restore];
