/**
 * vitest globalSetup: provisions the real Postgres and Elasticsearch once per run, builds a
 * migrated template database, and hands the URLs to test files via `inject`.
 */
import pg from "pg";
import type { TestProject } from "vitest/node";
import { createDb, migrate } from "@tether/core";
import { ensureElasticsearch } from "./services/elasticsearch-service.js";
import { ensurePostgres } from "./services/postgres-service.js";
import { adminUrl, dropRunArtifacts, runId } from "./run-naming.js";
import "./provided-context.js";


async function buildTemplate(baseUrl: string, name: string): Promise<void> {
  const admin = new pg.Client({ connectionString: baseUrl });
  await admin.connect();
  try {
    await admin.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
    await admin.query(`CREATE DATABASE ${name}`);
  } finally {
    await admin.end();
  }
  const db = createDb({ connectionString: adminUrl(baseUrl, name), max: 1 });
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
