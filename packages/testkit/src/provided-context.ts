/** Values the global setup provides to every test file through vitest's `inject`. */
declare module "vitest" {
  export interface ProvidedContext {
    tetherDatabaseUrl: string;
    tetherElasticsearchUrl: string;
    tetherTemplateDb: string;
    tetherRunId: string;
  }
}

export {};
