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
    tetherTemplateDb: string;
    tetherRunId: string;
  }
}

export {};
