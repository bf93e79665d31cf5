import { randomBytes } from "node:crypto";
import type { Kysely } from "kysely";
import { inject } from "vitest";
import { createDb } from "@tether/core";
import { ElasticsearchSink } from "@tether/elasticsearch";
import { createScratchDatabase } from "./scratch-database.js";
import "./provided-context.js";

export interface TestContext {
  /** Connection string of this file's own database (a clone of the migrated template). */
  databaseUrl: string;
  elasticsearchUrl: string;
  db: Kysely<any>;
  /** Index prefix owned by this context: `t<run>_<rand>_`. */
  indexPrefix: string;
  sink: ElasticsearchSink;
  /** A second sink pointed elsewhere (e.g. through a fault proxy), same prefix. */
  sinkAt(url: string): ElasticsearchSink;
  /** Drops the database and indices. */
  close(): Promise<void>;
}

/**
 * Gives the calling test file its own database, cloned from the migrated template
 * (`CREATE DATABASE … TEMPLATE`, milliseconds), and its own Elasticsearch index prefix.
 *
 * @example
 * let ctx: TestContext;
 * beforeAll(async () => { ctx = await createTestContext(); });
 * afterAll(() => ctx.close());
 */
export async function createTestContext(opts: { poolSize?: number } = {}): Promise<TestContext> {
  const baseUrl = inject("tetherDatabaseUrl");
  const esUrl = inject("tetherElasticsearchUrl");
  const template = inject("tetherTemplateDb");
  const run = inject("tetherRunId");
  const suffix = randomBytes(3).toString("hex");
  const dbName = `tether_t_${run}_${suffix}`;
  const scratch = await createScratchDatabase(baseUrl, dbName, { template });
  const databaseUrl = scratch.url;
  const db = createDb({ connectionString: databaseUrl, max: opts.poolSize ?? 10, applicationName: "tether-test" });
  const indexPrefix = `t${run}_${suffix}_`;
  const sinks: ElasticsearchSink[] = [];
  const sinkAt = (url: string) => {
    const s = new ElasticsearchSink({ client: url, indexPrefix });
    sinks.push(s);
    return s;
  };
  const sink = sinkAt(esUrl);
  return {
    databaseUrl,
    elasticsearchUrl: esUrl,
    db,
    indexPrefix,
    sink,
    sinkAt,
    async close() {
      await db.destroy();
      await fetch(new URL(`/${indexPrefix}*?expand_wildcards=all`, esUrl), { method: "DELETE" }).catch(() => undefined);
      for (const s of sinks) await s.close().catch(() => undefined);
      await scratch.drop();
    },
  };
}
