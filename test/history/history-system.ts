import { randomBytes } from "node:crypto";
import { fileURLToPath } from "node:url";
import type { Kysely } from "kysely";
import { createDb, createWriter, Drainer, enableCapture, migrate, type Collection, type Writer } from "@tether/core";
import { ElasticsearchSink } from "@tether/elasticsearch";
import { OpenSearchSink } from "@tether/opensearch";
import type { EngineSink } from "@tether/search-sink";
import { createScratchDatabase, dropIndices, startFaultProxy, waitFor, type FaultProxy, type ScratchDatabase } from "@tether/testkit";
import { shopMigrations, shopProducts } from "../support/shop.js";
import { historyCollections, historyMigrations } from "./history-domain.js";
import type { IdPools } from "./history-ids.js";

export type SinkName = "elasticsearch" | "opensearch";

/** Where a history runs: a Postgres server (and optionally a migrated template) and an engine. */
export interface HistoryTargets {
  /** Connection string of the Postgres server; each history gets a database of its own on it. */
  serverUrl: string;
  /** A database with tether's migrations to clone (fast); without it each history migrates. */
  template?: string;
  sink: SinkName;
  engineUrl: string;
  /** The template already holds the history's tables with capture on (see `prepareHistoryTemplate`): a history only clones it. */
  prepared?: boolean;
}

/** The collections a history syncs: one per id type, and the shop's products, whose documents read five other tables. */
export const HISTORY_COLLECTIONS: readonly Collection<any>[] = [...Object.values(historyCollections), shopProducts];

export const CONFIG_FILE = fileURLToPath(new URL("./history.config.ts", import.meta.url));
export const REPO = fileURLToPath(new URL("../..", import.meta.url));

/** Something a command started and left running (a drain pass, a `tether verify`, a rebuild). */
export interface BackgroundTask {
  label: string;
  done: Promise<unknown>;
  /** Ends it early at quiescence (a child process is killed); its outcome is then ignored. */
  stop?: () => Promise<void>;
}

/** The real system one history drives. */
export interface HistorySystem {
  readonly db: Kysely<any>;
  readonly databaseUrl: string;
  readonly indexPrefix: string;
  readonly targets: HistoryTargets;
  readonly pools: IdPools;
  /** Straight to the engine, for the invariant. */
  readonly sink: EngineSink;
  /** The writer's direct syncs go through `writerProxy`. */
  readonly writer: Writer;
  readonly writerProxy: FaultProxy;
  /** Two in-process drainers, side by side, through `drainerProxy`. */
  readonly drainers: readonly Drainer[];
  readonly drainerProxy: FaultProxy;
  /** Slow bulks on purpose: a drainer process killed behind it leaves its bulk to land late. */
  readonly lateProxy: FaultProxy;
  readonly background: BackgroundTask[];
  /** Run when the history closes, newest first (a snapshot repository removed). */
  readonly cleanups: (() => Promise<void>)[];
  /** The environment of a spawned `tether` verb or drainer daemon, reaching the engine at `url`. */
  env(url?: string): Record<string, string>;
  close(): Promise<void>;
}

export function sinkFor(name: SinkName, url: string, indexPrefix: string, retries?: number): EngineSink {
  const opts = { client: url, indexPrefix, ...(retries === undefined ? {} : { retries }) };
  return name === "opensearch" ? new OpenSearchSink(opts) : new ElasticsearchSink(opts);
}

/**
 * Request retries of the tester's own engine reads (the invariant's scan, a command's state read):
 * they check the engine, they are not one of the faults a history injects, so an engine briefly
 * unable to answer (an OpenSearch shard unavailable under load) is waited out, not reported.
 */
const TESTER_READ_RETRIES = 10;

/**
 * A template of the history's own, cloned from `targets.template`: the history's tables and the
 * shop's, with capture on, so each history clones it (one CREATE DATABASE) instead of running that
 * DDL again. Returns the targets that use it and how to drop it.
 */
export async function prepareHistoryTemplate(targets: HistoryTargets): Promise<{ targets: HistoryTargets; drop(): Promise<void> }> {
  const name = `tether_hist_tpl_${Date.now().toString(36)}${randomBytes(3).toString("hex")}`;
  const scratch = await createScratchDatabase(targets.serverUrl, name, targets.template ? { template: targets.template } : {});
  const db = createDb({ connectionString: scratch.url, max: 1, applicationName: "tether-history" });
  try {
    await migrate(db, [historyMigrations, shopMigrations]);
    for (const c of HISTORY_COLLECTIONS) await enableCapture(db, c, { graceMs: 0 });
  } catch (err) {
    await db.destroy();
    await scratch.drop();
    throw err;
  }
  await db.destroy();
  return { targets: { ...targets, template: name, prepared: true }, drop: () => scratch.drop() };
}

/** A database of its own, the tables with capture on, their indices created, the proxies and processes. */
export async function openHistorySystem(targets: HistoryTargets, pools: IdPools): Promise<HistorySystem> {
  const run = `${Date.now().toString(36)}${randomBytes(3).toString("hex")}`;
  const scratch: ScratchDatabase = await createScratchDatabase(targets.serverUrl, `tether_hist_${run}`, targets.template ? { template: targets.template } : {});
  const db = createDb({ connectionString: scratch.url, max: 12, applicationName: "tether-history" });
  const indexPrefix = `hist_${run}_`;
  const sink = sinkFor(targets.sink, targets.engineUrl, indexPrefix, TESTER_READ_RETRIES);
  const proxies: FaultProxy[] = [];
  const sinks: EngineSink[] = [sink];
  try {
    if (!targets.prepared) {
      await migrate(db, [historyMigrations, shopMigrations]);
      // Plain SQL is captured (on the related tables too), due at once: the drainer has no direct sync to wait for.
      for (const c of HISTORY_COLLECTIONS) await enableCapture(db, c, { graceMs: 0 });
    }
    await Promise.all(HISTORY_COLLECTIONS.map((c) => sink.ensureIndex(c.index, c.mappings)));
    const writerProxy = await startFaultProxy({ target: targets.engineUrl });
    proxies.push(writerProxy);
    const drainerProxy = await startFaultProxy({ target: targets.engineUrl });
    proxies.push(drainerProxy);
    const lateProxy = await startFaultProxy({ target: targets.engineUrl });
    proxies.push(lateProxy);
    await lateProxy.setMode({ kind: "latency", ms: 600, jitterMs: 400, bulkOnly: true });
    const writerSink = sinkFor(targets.sink, writerProxy.url, indexPrefix);
    const drainerSink = sinkFor(targets.sink, drainerProxy.url, indexPrefix);
    sinks.push(writerSink, drainerSink);
    // graceMs 0: the drainer may race the direct sync, the harsher case.
    const writer = createWriter({ sink: writerSink, directSyncTimeoutMs: 300, graceMs: 0 });
    // One document per fan-out chunk: a fan-out of this history's few products takes several.
    const drainers = [0, 1].map(
      () =>
        new Drainer({
          db,
          sink: drainerSink,
          collections: HISTORY_COLLECTIONS,
          batchSize: 7,
          deadlineMs: 3_000,
          backoff: { baseMs: 20, maxMs: 200 },
          maxAttempts: 3,
          fanoutChunkSize: 1,
        }),
    );
    const background: BackgroundTask[] = [];
    const cleanups: (() => Promise<void>)[] = [];
    return {
      db,
      databaseUrl: scratch.url,
      indexPrefix,
      targets,
      pools,
      sink,
      writer,
      writerProxy,
      drainers,
      drainerProxy,
      lateProxy,
      background,
      cleanups,
      env: (url = targets.engineUrl) => ({
        DATABASE_URL: scratch.url,
        TETHER_INDEX_PREFIX: indexPrefix,
        TETHER_CONFIG: CONFIG_FILE,
        TETHER_SINK: targets.sink,
        ...(targets.sink === "opensearch" ? { OPENSEARCH_URL: url } : { ELASTICSEARCH_URL: url }),
        LOG_LEVEL: "info",
      }),
      async close() {
        // A history that failed early leaves work running: kill processes, let drain passes reach their deadline.
        for (const t of background.splice(0)) await (t.stop ? t.stop() : t.done.catch(() => undefined));
        for (const c of cleanups.splice(0).reverse()) await c().catch(() => undefined);
        for (const p of proxies) await p.close();
        for (const s of sinks) await s.close?.().catch(() => undefined);
        await db.destroy();
        await dropIndices(targets.engineUrl, indexPrefix);
        await scratch.drop();
      },
    };
  } catch (err) {
    for (const p of proxies) await p.close().catch(() => undefined);
    await db.destroy();
    await scratch.drop();
    throw err;
  }
}

/** Every delayed request the proxies still hold has reached the engine (a late bulk has landed). */
export async function proxiesSettled(sys: HistorySystem): Promise<void> {
  for (const p of [sys.writerProxy, sys.drainerProxy, sys.lateProxy]) await p.setMode("pass");
  await waitFor(() => [sys.writerProxy, sys.drainerProxy, sys.lateProxy].every((p) => p.stats.pendingDelayed === 0), { what: "delayed requests to land", timeoutMs: 60_000, intervalMs: 20 });
}
