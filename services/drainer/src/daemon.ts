import { EventEmitter } from "node:events";
import type { Kysely } from "kysely";
import type pino from "pino";
import {
  checkVersionFloor,
  databaseNow,
  Drainer,
  DrainerHeartbeat,
  latestQueueSample,
  purgeTombstones,
  readRestoreFindings,
  resolveAlertThresholds,
  resolveMaintenanceOptions,
  runMaintenance,
  verifyKeyReadiness,
  verifyRunSummaries,
  type AlertThresholds,
  type Collection,
  type DrainerOptions,
  type MaintenanceOptions,
  type MaintenanceResult,
  type CollectionPurgeResult,
  type ScheduledVerifyResult,
  type Sink,
  type VerifyScheduleOptions,
  type VersionFloorResult,
} from "@tether/core/internal";
import { startVerifySchedule } from "./verify-schedule-loop.js";
import { newDaemonState, recordMaintenance, recordPass, type DaemonState } from "./daemon-state.js";
import { buildDrainerServer } from "./http-server.js";
import { createMetricsRegistry } from "./metrics-registry.js";
import { createLogger, startTelemetry, type Telemetry } from "@tether/service-kit";

/** The tombstone retention purge the maintenance leader runs (see `purgeTombstones`). */
export interface TombstonePurgeSettings {
  /** Tombstones younger than this are kept. Default 30 days. */
  retentionMs?: number;
  /** Spacing of purges. Default 3600000 (hourly). */
  purgeIntervalMs?: number;
  /** false: never purge; tombstones are kept forever. Default true. */
  purge?: boolean;
}

export interface DrainerDaemonOptions {
  db: Kysely<any>;
  sink: Sink;
  collections: readonly Collection<any>[];
  /** Default: a pino logger at "info" on stdout. */
  logger?: pino.Logger;
  /** Port of /healthz, /metrics and /alerts. 0 picks a free port (see `port` on the result). Default 9464. */
  port?: number;
  /** Listen address. Default "0.0.0.0". */
  host?: string;
  /** Drain loop options (batch size, deadline, interval, max attempts...); core's defaults apply. */
  drainer?: Omit<DrainerOptions, "db" | "sink" | "collections" | "logger">;
  /**
   * Maintenance (queue samples behind the gauges and windowed alerts, pruning), attempted by
   * every replica, done by the one holding the advisory lock. `intervalMs`: how often this
   * replica tries, independent of the drain interval so gauges stay fresh. Default 15000 ms.
   * `sampleIntervalMs` defaults to half of it; other fields: core's `MaintenanceOptions` defaults.
   */
  maintenance?: MaintenanceOptions & { intervalMs?: number };
  /** The tombstone retention purge. Default: hourly, tombstones older than 30 days. */
  tombstones?: TombstonePurgeSettings;
  /**
   * Scheduled anti-entropy, run by the maintenance leader: a fast verify of every collection
   * each `fastIntervalMs`, a deep one each `deepIntervalMs`, paced and checkpointed (core's
   * `VerifyScheduleOptions`). Default: hourly fast, daily deep.
   */
  verify?: VerifyScheduleOptions;
  /** Thresholds of GET /alerts. Default: core's (the same as infra/prometheus/tether-rules.yml). */
  alertThresholds?: AlertThresholds;
  /**
   * Telemetry the process started (`startTelemetry`); the daemon stops it with itself. Default:
   * tracing and metrics in this process only, nothing exported.
   */
  telemetry?: Telemetry;
  /**
   * The heartbeat row the admin console lists drainers from (tether.drainer_heartbeat).
   * `version` is shown beside host and pid. Defaults: version "unknown", every 30000 ms.
   */
  heartbeat?: { version?: string; intervalMs?: number };
}

export interface DrainerDaemonEvents {
  /** A maintenance attempt finished (leader or not). */
  maintenance: [MaintenanceResult];
  maintenanceError: [Error];
  /** A tombstone purge finished (run by the maintenance leader every `tombstones.purgeIntervalMs`). */
  tombstonePurge: [CollectionPurgeResult[]];
  tombstonePurgeError: [Error];
  /** A scheduled verify run ended (completed, failed, or left to resume from its checkpoint). */
  verifyRun: [ScheduledVerifyResult];
  /** The maintenance leader's version floor check finished (see `checkVersionFloor`). */
  versionFloor: [VersionFloorResult[]];
  versionFloorError: [Error];
}

export interface DrainerDaemon {
  drainer: Drainer;
  /** The port actually listened on. */
  port: number;
  /** Loop history, as served by /healthz. */
  state: DaemonState;
  /** "maintenance" / "maintenanceError" signals, for tests and embedding. */
  events: EventEmitter<DrainerDaemonEvents>;
  /** Runs a maintenance attempt now (it also runs on its own interval). */
  maintainNow(): Promise<MaintenanceResult>;
  /**
   * Stops after the current drain pass commits or rolls back, then closes the HTTP server and
   * the telemetry providers. Leaves `db` and `sink` open: they belong to the caller.
   */
  stop(): Promise<void>;
}

/**
 * The reconciler daemon: the core drain loop, maintenance on its own interval, and an HTTP
 * server with /healthz, /metrics (Prometheus text) and /alerts.
 *
 * @example
 * const daemon = await startDrainerDaemon({ db, sink, collections: [annotations], port: 9464 });
 * process.once("SIGTERM", () => void daemon.stop().then(() => process.exit(0)));
 */
export async function startDrainerDaemon(opts: DrainerDaemonOptions): Promise<DrainerDaemon> {
  const logger = opts.logger ?? createLogger({ service: "drainer" });
  const { intervalMs: maintenanceIntervalMs = 15_000, ...maintenanceRest } = opts.maintenance ?? {};
  // One sample per attempt of a single replica; with N replicas, at most two per interval.
  const maintenanceOptions = resolveMaintenanceOptions({ sampleIntervalMs: Math.floor(maintenanceIntervalMs / 2), ...maintenanceRest });
  if (!Number.isInteger(maintenanceIntervalMs) || maintenanceIntervalMs <= 0) throw new RangeError("maintenance.intervalMs must be a positive integer");
  const alertThresholds = resolveAlertThresholds(opts.alertThresholds);
  const drainer = new Drainer({ ...opts.drainer, db: opts.db, sink: opts.sink, collections: opts.collections, logger });

  const tracing = opts.telemetry ?? startTelemetry({ serviceName: "tether-drainer", env: {} });
  // A collection with no verify run yet is overdue only once the alert's age has passed since this start.
  const scheduleStartedAt = new Date();
  const metrics = createMetricsRegistry({
    readSample: () => latestQueueSample(opts.db),
    readVerifyRuns: () => verifyRunSummaries(opts.db),
    readRestores: { read: async () => readRestoreFindings(opts.db, alertThresholds, await databaseNow(opts.db)), collections: opts.collections.map((c) => c.name) },
    verifySchedule: () => ({
      collections: opts.collections.map((c) => c.name),
      modes: [...(verify.options.fastIntervalMs > 0 ? ["fast" as const] : []), ...(verify.options.deepIntervalMs > 0 ? ["deep" as const] : [])],
      startedAt: scheduleStartedAt,
    }),
    logger,
  });
  const state = newDaemonState();
  const events = new EventEmitter<DrainerDaemonEvents>();

  const heartbeat = new DrainerHeartbeat({ db: opts.db, version: opts.heartbeat?.version ?? "unknown", logger, ...(opts.heartbeat?.intervalMs ? { intervalMs: opts.heartbeat.intervalMs } : {}) });

  drainer.on("batch", (r) => {
    recordPass(state, r);
    heartbeat.recordPass(r);
    const worth = r.claimed > 0 || r.expired > 0;
    if (r.error) return; // the Drainer logged it
    if (worth) logger.info({ pass: r }, "drain pass");
    else logger.debug({ pass: r }, "drain pass");
  });

  drainer.on("listening", () => logger.info({ channel: "tether_wake" }, "listening for wake-ups"));

  const purge = { retentionMs: opts.tombstones?.retentionMs, intervalMs: opts.tombstones?.purgeIntervalMs ?? 3_600_000, on: opts.tombstones?.purge ?? true };
  let lastPurge = 0;
  let purging: Promise<void> | undefined;
  // Only the maintenance leader purges, at most once per interval, beside (not inside) its transaction.
  const purgeIfDue = () => {
    if (!purge.on || purging || Date.now() - lastPurge < purge.intervalMs) return;
    lastPurge = Date.now();
    purging = purgeTombstones(opts.sink, opts.collections, { db: opts.db, ...(purge.retentionMs === undefined ? {} : { retentionMs: purge.retentionMs }) })
      .then(
        (results) => {
          const purged = results.reduce((n, r) => n + r.purged, 0);
          if (purged > 0) logger.info({ results }, "purged tombstones past retention");
          events.emit("tombstonePurge", results);
        },
        (err: unknown) => {
          const e = err instanceof Error ? err : new Error(String(err));
          logger.warn({ err: e.message }, "tombstone purge failed; retrying next interval");
          events.emit("tombstonePurgeError", e);
        },
      )
      .finally(() => {
        purging = undefined;
      });
  };

  let flooring: Promise<void> | undefined;
  // The leader checks the version floor each cycle (one aggregation per collection), beside its transaction.
  const checkFloor = (): Promise<void> => {
    flooring ??= checkVersionFloor({ db: opts.db, sink: opts.sink, collections: opts.collections, logger, call: { timeoutMs: 10_000, retries: 0 } })
      .then(
        (results) => {
          events.emit("versionFloor", results);
          // The rows went back: what was drained before may be wrong now; look for work at once.
          if (results.some((r) => r.restore !== undefined)) drainer.poke();
        },
        (err: unknown) => {
          const e = err instanceof Error ? err : new Error(String(err));
          logger.warn({ err: e.message }, "version floor check failed; retrying next cycle");
          events.emit("versionFloorError", e);
        },
      )
      .finally(() => {
        flooring = undefined;
      });
    return flooring;
  };

  const verify = startVerifySchedule({ db: opts.db, sink: opts.sink, collections: opts.collections, options: opts.verify ?? {}, logger, onRun: (r) => events.emit("verifyRun", r) });

  let inFlight: Promise<MaintenanceResult> | undefined;
  const maintainNow = (): Promise<MaintenanceResult> => {
    inFlight ??= runMaintenance(opts.db, maintenanceOptions)
      .then(
        (r) => {
          recordMaintenance(state, r);
          events.emit("maintenance", r);
          if (r.leader) {
            // The schedule hears of a restore the floor check found in this same cycle (a fast verify at once).
            void checkFloor().finally(() => verify.runIfDue());
            purgeIfDue();
          }
          return r;
        },
        (err: unknown) => {
          const e = err instanceof Error ? err : new Error(String(err));
          recordMaintenance(state, e);
          logger.warn({ err: e.message }, "maintenance failed; retrying next interval");
          events.emit("maintenanceError", e);
          throw e;
        },
      )
      .finally(() => {
        inFlight = undefined;
      });
    return inFlight;
  };

  let stopping = false;
  let timer: NodeJS.Timeout | undefined;
  const scheduleMaintenance = () => {
    if (stopping) return;
    // Jitter spreads N replicas' lock attempts over the interval.
    const delay = maintenanceIntervalMs * (0.9 + Math.random() * 0.2);
    timer = setTimeout(() => {
      void maintainNow()
        .catch(() => undefined)
        .finally(scheduleMaintenance);
    }, delay);
  };

  const app = await buildDrainerServer({ db: opts.db, drainer, state, metrics, alertThresholds, logger, collections: opts.collections.map((c) => c.name), scheduleStartedAt });
  try {
    await app.listen({ port: opts.port ?? 9464, host: opts.host ?? "0.0.0.0" });
  } catch (err) {
    // Spans and a last metric collection go out before the provider stops.
    await tracing.shutdown();
    await metrics.shutdown();
    throw err;
  }
  const address = app.server.address();
  const port = typeof address === "object" && address ? address.port : (opts.port ?? 9464);

  await heartbeat.start();
  drainer.start();
  // What the bucketed verify of uuid and text ids still needs, said once at start-up (and by `tether status`).
  void verifyKeyReadiness(opts.db, opts.sink, opts.collections, { timeoutMs: 10_000, retries: 0 }).then(
    (warnings) => {
      for (const w of warnings) logger.warn({ collection: w.collection, kind: w.kind, ...(w.unkeyed !== undefined ? { unkeyed: w.unkeyed } : {}), fix: w.fix }, w.message);
    },
    (err: unknown) => logger.warn({ err: err instanceof Error ? err.message : String(err) }, "could not check what verify needs"),
  );
  void maintainNow().catch(() => undefined);
  scheduleMaintenance();
  logger.info(
    {
      port,
      batchSize: drainer.options.batchSize,
      intervalMs: drainer.options.intervalMs,
      deadlineMs: drainer.options.deadlineMs,
      maxAttempts: drainer.options.maxAttempts,
      fanoutChunkSize: drainer.options.fanoutChunkSize,
      maintenanceIntervalMs,
      verify: verify.options,
      listen: drainer.options.listen !== undefined,
      collections: opts.collections.map((c) => c.jobName),
    },
    "listening",
  );

  let stopped: Promise<void> | undefined;
  const stop = (): Promise<void> => {
    stopped ??= (async () => {
      stopping = true;
      if (timer) clearTimeout(timer);
      await drainer.stop();
      await heartbeat.stop();
      await inFlight?.catch(() => undefined);
      await purging;
      await verify.stop();
      await app.close();
      await tracing.shutdown();
      await metrics.shutdown();
      logger.info({ passes: state.passes, failedPasses: state.failedPasses }, "stopped");
    })();
    return stopped;
  };

  return { drainer, port, state, events, maintainNow, stop };
}
