/**
 * vitest globalSetup: provisions the real Postgres and Elasticsearch once per run, builds a
 * migrated template database, and hands the URLs to test files via `inject`.
 */
import type { TestProject } from "vitest/node";
import { createDb, migrate } from "@tether/core";
import { ensureElasticsearch } from "./services/elasticsearch-service.js";
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
  const [postgres, elasticsearch] = await Promise.all([ensurePostgres(), ensureElasticsearch()]);
  const id = runId();
  const template = `tether_tpl_${id}`;
  await buildTemplate(postgres.url, template);
  project.provide("tetherDatabaseUrl", postgres.url);
  project.provide("tetherElasticsearchUrl", elasticsearch.url);
  project.provide("tetherTemplateDb", template);
  project.provide("tetherRunId", id);
  console.log(`[tether tests] postgres via ${postgres.via} (${postgres.detail}); elasticsearch via ${elasticsearch.via} (${elasticsearch.detail})`);
  return async () => {
    await dropRunArtifacts(postgres.url, elasticsearch.url, id);
  };
}
