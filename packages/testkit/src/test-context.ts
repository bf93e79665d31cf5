import { randomBytes } from "node:crypto";
import type { Kysely } from "kysely";
import { inject } from "vitest";
import { createDb } from "@tether/core";
import { ElasticsearchSink } from "@tether/elasticsearch";
import { OpenSearchSink } from "@tether/opensearch";
import type { EngineSink } from "@tether/search-sink";
import { rawEngine, dropIndices, type RawEngine } from "./raw-engine.js";
import { createScratchDatabase } from "./scratch-database.js";
import "./provided-context.js";

export type SinkName = "elasticsearch" | "opensearch";

export interface TestContext<S extends EngineSink = ElasticsearchSink> {
  /** Connection string of this file's own database (a clone of the migrated template). */
  databaseUrl: string;
  /** The URL of the engine `sink` talks to. */
  downstreamUrl: string;
  /** The same as `downstreamUrl` (most tests run against Elasticsearch and name it so). */
  elasticsearchUrl: string;
  db: Kysely<any>;
  /** Index prefix owned by this context: `t<run>_<rand>_`. */
  indexPrefix: string;
  sink: S;
  /** A second sink pointed elsewhere (e.g. through a fault proxy), same prefix. */
  sinkAt(url: string): S;
  /** What a spawned API or drainer needs to reach this context's engine at `url` (default: directly). */
  serviceEnv(url?: string): Record<string, string>;
  /** Edits behind tether's back, on whichever engine this is. */
  raw: RawEngine;
  /** Drops the database and indices. */
  close(): Promise<void>;
}

export interface TestContextOptions {
  poolSize?: number;
}

function sinkFor(name: SinkName, url: string, indexPrefix: string): EngineSink {
  return name === "opensearch" ? new OpenSearchSink({ client: url, indexPrefix }) : new ElasticsearchSink({ client: url, indexPrefix });
}

/** The engine URL the global setup provided for `name`; a clear error when this project has none. */
export function providedEngineUrl(name: SinkName): string {
  const url = name === "opensearch" ? inject("tetherOpenSearchUrl") : inject("tetherElasticsearchUrl");
  if (!url) throw new Error(`this test project provisioned no ${name}: run the file in the project that provides it (vitest --project ${name})`);
  return url;
}

/**
 * What the global setup provisioned for the calling test project: the Postgres server, the
 * migrated template database, the project's sink and its engine. For tests that make databases
 * of their own (one per generated history), where `createTestContext` makes one per file.
 */
export function providedServices(): { serverUrl: string; template: string; sink: SinkName; engineUrl: string } {
  const sink: SinkName = inject("tetherSink") ?? "elasticsearch";
  return { serverUrl: inject("tetherDatabaseUrl"), template: inject("tetherTemplateDb"), sink, engineUrl: providedEngineUrl(sink) };
}

/**
 * Gives the calling test file its own database, cloned from the migrated template
 * (`CREATE DATABASE … TEMPLATE`, milliseconds), and its own index prefix on Elasticsearch.
 * `{ sink: "per-project" }` gives the sink of the test project instead (Elasticsearch, or
 * OpenSearch in the `opensearch` project): the tests of the downstream guarantees run once per sink.
 *
 * @example
 * let ctx: TestContext;
 * beforeAll(async () => { ctx = await createTestContext(); });
 * afterAll(() => ctx.close());
 */
export async function createTestContext(opts?: TestContextOptions): Promise<TestContext<ElasticsearchSink>>;
export async function createTestContext(opts: TestContextOptions & { sink: "per-project" }): Promise<TestContext<EngineSink>>;
export async function createTestContext(opts: TestContextOptions & { sink?: "per-project" } = {}): Promise<TestContext<EngineSink>> {
  const sinkName: SinkName = opts.sink === "per-project" ? inject("tetherSink") ?? "elasticsearch" : "elasticsearch";
  const engineUrl = providedEngineUrl(sinkName);
  const baseUrl = inject("tetherDatabaseUrl");
  const template = inject("tetherTemplateDb");
  const run = inject("tetherRunId");
  const suffix = randomBytes(3).toString("hex");
  const dbName = `tether_t_${run}_${suffix}`;
  const scratch = await createScratchDatabase(baseUrl, dbName, { template });
  const databaseUrl = scratch.url;
  const db = createDb({ connectionString: databaseUrl, max: opts.poolSize ?? 10, applicationName: "tether-test" });
  const indexPrefix = `t${run}_${suffix}_`;
  const sinks: EngineSink[] = [];
  const sinkAt = (url: string) => {
    const s = sinkFor(sinkName, url, indexPrefix);
    sinks.push(s);
    return s;
  };
  return {
    databaseUrl,
    downstreamUrl: engineUrl,
    elasticsearchUrl: engineUrl,
    db,
    indexPrefix,
    sink: sinkAt(engineUrl),
    sinkAt,
    serviceEnv: (url = engineUrl): Record<string, string> =>
      sinkName === "opensearch" ? { TETHER_SINK: "opensearch", OPENSEARCH_URL: url } : { TETHER_SINK: "elasticsearch", ELASTICSEARCH_URL: url },
    raw: rawEngine(engineUrl, indexPrefix),
    async close() {
      await db.destroy();
      await dropIndices(engineUrl, indexPrefix);
      for (const s of sinks) await s.close().catch(() => undefined);
      await scratch.drop();
    },
  };
}
