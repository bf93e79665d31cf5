import type { TetherOptions } from "@tether/core";
import type { DrainerDaemonOptions } from "./daemon.js";
import type { DrainerEnv } from "./env.js";

type Settings = Pick<DrainerDaemonOptions, "drainer" | "maintenance" | "tombstones" | "verify" | "alertThresholds">;

const defined = <T extends object>(o: T): Partial<T> => Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined)) as Partial<T>;

/** The daemon's loop settings: its environment over the config's `options` over the daemon's defaults. */
export function drainerSettings(options: TetherOptions, env: DrainerEnv): Settings {
  return {
    drainer: {
      concurrency: 2,
      ...options.drainer,
      ...defined({
        intervalMs: env.TETHER_DRAIN_INTERVAL_MS,
        batchSize: env.TETHER_BATCH_SIZE,
        concurrency: env.TETHER_DRAIN_CONCURRENCY,
        deadlineMs: env.TETHER_DEADLINE_MS,
        maxAttempts: env.TETHER_MAX_ATTEMPTS,
        fanoutChunkSize: env.TETHER_FANOUT_CHUNK_SIZE,
      }),
    },
    maintenance: { ...options.maintenance, ...defined({ intervalMs: env.TETHER_MAINTENANCE_INTERVAL_MS }) },
    tombstones: { ...options.tombstones },
    verify: { ...options.verify, ...defined({ fastIntervalMs: env.TETHER_VERIFY_INTERVAL_MS, deepIntervalMs: env.TETHER_VERIFY_DEEP_INTERVAL_MS }) },
    alertThresholds: { ...options.alerts },
  };
}
