import { conformanceTests, historyTest, perSinkScenarios } from "../suites.js";

/**
 * What scripts/test-matrix runs, and the README's compatibility table in code. A combination is
 * one engine major and one Postgres major, and the suites worth running on it:
 *
 * | combination    | engine              | Postgres | suites                                 | why                                             |
 * | -------------- | ------------------- | -------- | -------------------------------------- | ----------------------------------------------- |
 * | es8-pg15       | Elasticsearch 8.19  | 15       | conformance, scenarios, history        | the baseline (what `pnpm test` runs in full)    |
 * | es9-pg15       | Elasticsearch 9.5   | 15       | conformance, scenarios, history        | each engine major × the machine's Postgres      |
 * | os2-pg15       | OpenSearch 2.19     | 15       | conformance, scenarios, history        |                                                 |
 * | os3-pg15       | OpenSearch 3.6      | 15       | conformance, scenarios, history        |                                                 |
 * | es8-pg14       | Elasticsearch 8.19  | 14       | scenarios, history                     | the oldest of each                              |
 * | es9-pg16       | Elasticsearch 9.5   | 16       | scenarios, history                     | each Postgres major × one engine                |
 * | es9-pg17       | Elasticsearch 9.5   | 17       | scenarios, history                     |                                                 |
 * | es9-pg18       | Elasticsearch 9.5   | 18       | scenarios, history                     |                                                 |
 * | os3-pg18       | OpenSearch 3.6      | 18       | scenarios, history                     | the newest of each                              |
 *
 * The conformance suite talks to the engine alone, so it runs once per engine major (with the
 * machine's Postgres); the scenarios and the history tester exercise both sides.
 */

export type Suite = "conformance" | "scenarios" | "history";

export interface MatrixCombination {
  name: string;
  engine: { product: "elasticsearch" | "opensearch"; major: number };
  postgres: number;
  suites: readonly Suite[];
}

const all: readonly Suite[] = ["conformance", "scenarios", "history"];
const bothSides: readonly Suite[] = ["scenarios", "history"];
const es = (major: number) => ({ product: "elasticsearch" as const, major });
const os = (major: number) => ({ product: "opensearch" as const, major });

export const MATRIX_COMBINATIONS: readonly MatrixCombination[] = [
  { name: "es8-pg15", engine: es(8), postgres: 15, suites: all },
  { name: "es9-pg15", engine: es(9), postgres: 15, suites: all },
  { name: "os2-pg15", engine: os(2), postgres: 15, suites: all },
  { name: "os3-pg15", engine: os(3), postgres: 15, suites: all },
  { name: "es8-pg14", engine: es(8), postgres: 14, suites: bothSides },
  { name: "es9-pg16", engine: es(9), postgres: 16, suites: bothSides },
  { name: "es9-pg17", engine: es(9), postgres: 17, suites: bothSides },
  { name: "es9-pg18", engine: es(9), postgres: 18, suites: bothSides },
  { name: "os3-pg18", engine: os(3), postgres: 18, suites: bothSides },
];

/** The test files (vitest filters) of `suites` on `product`. */
export function suiteFiles(product: "elasticsearch" | "opensearch", suites: readonly Suite[]): string[] {
  return suites.flatMap((s) => {
    if (s === "conformance") return conformanceTests[product].map((glob) => glob.replace("**/*.test.ts", ""));
    if (s === "scenarios") return perSinkScenarios;
    return [historyTest];
  });
}
