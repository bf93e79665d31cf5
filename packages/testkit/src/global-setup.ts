/**
 * vitest globalSetup, run once per test project: provisions the real Postgres and the engine
 * the project runs against (Elasticsearch, or OpenSearch in the `opensearch` project), builds a
 * migrated template database, and hands the URLs to test files via `inject`.
 */
import type { TestProject } from "vitest/node";
import { createDb, migrate } from "@tether/core";
import { ensureElasticsearch } from "./services/elasticsearch-service.js";
import { ensureOpenSearch } from "./services/opensearch-service.js";
import { ensurePostgres } from "./services/postgres-service.js";
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
  // The project's config says which sink its per-sink tests use (`provide: { tetherSink }`).
  const sink = project.config.provide?.tetherSink ?? "elasticsearch";
  const [postgres, engine] = await Promise.all([ensurePostgres(), sink === "opensearch" ? ensureOpenSearch() : ensureElasticsearch()]);
  const id = runId();
  const template = `tether_tpl_${id}`;
  await buildTemplate(postgres.url, template);
  project.provide("tetherDatabaseUrl", postgres.url);
  project.provide("tetherSink", sink);
  project.provide("tetherElasticsearchUrl", sink === "elasticsearch" ? engine.url : "");
  project.provide("tetherOpenSearchUrl", sink === "opensearch" ? engine.url : "");
  project.provide("tetherTemplateDb", template);
  project.provide("tetherRunId", id);
  console.log(`[tether tests${project.name ? `: ${project.name}` : ""}] postgres via ${postgres.via} (${postgres.detail}); ${sink} via ${engine.via} (${engine.detail})`);
  return async () => {
    await dropRunArtifacts(postgres.url, engine.url, id);
  };
}
