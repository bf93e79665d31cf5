/** Values the global setup provides to every test file through vitest's `inject`. */
declare module "vitest" {
  export interface ProvidedContext {
    tetherDatabaseUrl: string;
    /** Empty in a project that does not run against Elasticsearch. */
    tetherElasticsearchUrl: string;
    /** Empty in a project that does not run against OpenSearch. */
    tetherOpenSearchUrl: string;
    /** The sink this test project runs the per-sink tests against (vitest `provide`). */
    tetherSink: "elasticsearch" | "opensearch";
    /**
     * Set in a project's config (`provide`) to run it against another major of its engine ("9"
     * for Elasticsearch, "3" for OpenSearch) on that major's own port; "" or absent: the usual one.
     */
    tetherEngineVersion?: string;
    /**
     * Set in a project's config to run it against a Postgres server of that major ("14"), a
     * private one started for the run and stopped after it; "" or absent: DATABASE_URL's.
     */
    tetherPostgresVersion?: string;
    tetherTemplateDb: string;
    tetherRunId: string;
  }
}

export {};
