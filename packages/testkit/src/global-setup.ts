/**
 * vitest globalSetup, run once per test project: provisions the real Postgres and the engine
 * the project runs against (Elasticsearch, or OpenSearch in the `opensearch` project; another
 * major when the project's config provides `tetherEngineVersion` / `tetherPostgresVersion`),
 * builds a migrated template database, and hands the URLs to test files via `inject`.
 */
import type { TestProject } from "vitest/node";
import { createDb, migrate } from "@tether/core";
import { ensureElasticsearch } from "./services/elasticsearch-service.js";
import { ensureOpenSearch } from "./services/opensearch-service.js";
import { ensurePostgres } from "./services/postgres-service.js";
import { ensureVersionedEngine, versionedPostgres, type Provisioned } from "./services/versioned-provisioning.js";
import { dropRunArtifacts, runId } from "./run-naming.js";
import { createScratchDatabase } from "./scratch-database.js";
import "./provided-context.js";


async function buildTemplate(baseUrl: string, name: string): Promise<void> {
  const scratch = await createScratchDatabase(baseUrl, name, { replace: true });
  const db = createDb({ connectionString: scratch.url, max: 1 });
  try {
    await migrate(db);
  } finally {
    await db.destroy();
  }
}

export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  // The project's config says which sink its per-sink tests use (`provide: { tetherSink }`), and
  // which other majors it runs against.
  const provided = project.config.provide ?? {};
  const sink = provided.tetherSink ?? "elasticsearch";
  const engineVersion = provided.tetherEngineVersion || undefined;
  const postgresVersion = provided.tetherPostgresVersion || undefined;
  const [postgres, engine]: [Provisioned, Provisioned] = await Promise.all([
    postgresVersion ? versionedPostgres(postgresVersion) : ensurePostgres().then((record) => ({ record })),
    engineVersion ? ensureVersionedEngine(sink, engineVersion) : (sink === "opensearch" ? ensureOpenSearch() : ensureElasticsearch()).then((record) => ({ record })),
  ]);
  const id = runId();
  const template = `tether_tpl_${id}`;
  await buildTemplate(postgres.record.url, template);
  project.provide("tetherDatabaseUrl", postgres.record.url);
  project.provide("tetherSink", sink);
  project.provide("tetherElasticsearchUrl", sink === "elasticsearch" ? engine.record.url : "");
  project.provide("tetherOpenSearchUrl", sink === "opensearch" ? engine.record.url : "");
  project.provide("tetherTemplateDb", template);
  project.provide("tetherRunId", id);
  console.log(`[tether tests${project.name ? `: ${project.name}` : ""}] postgres via ${postgres.record.via} (${postgres.record.detail}); ${sink} via ${engine.record.via} (${engine.record.detail})`);
  return async () => {
    try {
      await dropRunArtifacts(postgres.record.url, engine.record.url, id);
    } finally {
      await Promise.all([postgres.release?.(), engine.release?.()]);
    }
  };
}
