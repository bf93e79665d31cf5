/**
 * The server versions Tether is tested against, and where each runs when provisioned here.
 *
 * | product       | major | version  | from Maven Central                                   | Java    | default port |
 * | ------------- | ----- | -------- | ---------------------------------------------------- | ------- | ------------ |
 * | Elasticsearch | 8     | 8.19.21  | org.elasticsearch.distribution.integ-test-zip        | 17..23  | 9200         |
 * | Elasticsearch | 9     | 9.5.2    | org.elasticsearch.distribution.integ-test-zip        | 21..25  | 9220         |
 * | OpenSearch    | 2     | 2.19.6   | org.opensearch.distribution.integ-test-zip           | 17..23  | 9201         |
 * | OpenSearch    | 3     | 3.6.0    | org.opensearch.distribution.integ-test-zip           | 21..25  | 9221         |
 * | Postgres      | 14    | 14.24.0  | io.zonky.test.postgres:embedded-postgres-binaries-…  | —       | 5414         |
 * | Postgres      | 15    | machine  | the machine's own server (Debian)                    | —       | 5432         |
 * | Postgres      | 16    | 16.15.0  | embedded-postgres-binaries                           | —       | 5416         |
 * | Postgres      | 17    | 17.11.0  | embedded-postgres-binaries                           | —       | 5417         |
 * | Postgres      | 18    | 18.6.0   | embedded-postgres-binaries                           | —       | 5418         |
 *
 * Each version has a port of its own, so every major runs beside the others (and beside the
 * machine's Postgres 15, Elasticsearch 8 and OpenSearch 2 on their usual ports).
 */

export type EngineProduct = "elasticsearch" | "opensearch";

export interface EngineVersion {
  product: EngineProduct;
  major: number;
  /** The full version fetched from Maven Central. */
  version: string;
  /** Lowest and highest Java major the distribution runs on. */
  java: { min: number; max: number };
  port: number;
}

export const ENGINE_VERSIONS: readonly EngineVersion[] = [
  { product: "elasticsearch", major: 8, version: "8.19.21", java: { min: 17, max: 23 }, port: 9200 },
  { product: "elasticsearch", major: 9, version: "9.5.2", java: { min: 21, max: 25 }, port: 9220 },
  { product: "opensearch", major: 2, version: "2.19.6", java: { min: 17, max: 23 }, port: 9201 },
  { product: "opensearch", major: 3, version: "3.6.0", java: { min: 21, max: 25 }, port: 9221 },
];

export interface PostgresVersion {
  major: number;
  /** The embedded-postgres-binaries version, or "machine" for the machine's own server. */
  version: string;
  port: number;
}

export const POSTGRES_VERSIONS: readonly PostgresVersion[] = [
  { major: 14, version: "14.24.0", port: 5414 },
  { major: 15, version: "machine", port: 5432 },
  { major: 16, version: "16.15.0", port: 5416 },
  { major: 17, version: "17.11.0", port: 5417 },
  { major: 18, version: "18.6.0", port: 5418 },
];

/**
 * The catalogue entry for `product` at `version`: a major ("9") or a full version ("9.5.2",
 * which must be the one listed). A full version not listed gets the Java range and port of
 * its major. Throws naming the known ones otherwise.
 */
export function engineVersion(product: EngineProduct, version: string): EngineVersion {
  const major = Number(version.split(".")[0]);
  const known = ENGINE_VERSIONS.filter((v) => v.product === product);
  const entry = known.find((v) => v.major === major);
  if (!entry || !/^\d+(\.\d+){0,2}$/.test(version)) {
    throw new Error(`unknown ${product} version "${version}"; known: ${known.map((v) => `${v.major} (${v.version})`).join(", ")}`);
  }
  return version.includes(".") ? { ...entry, version } : entry;
}

/** The catalogue entry for Postgres `major` ("17" or "17.11.0"); throws naming the known ones. */
export function postgresVersion(version: string): PostgresVersion {
  const major = Number(version.split(".")[0]);
  const entry = POSTGRES_VERSIONS.find((v) => v.major === major);
  if (!entry || !/^\d+(\.\d+){0,2}$/.test(version)) {
    throw new Error(`unknown Postgres version "${version}"; known: ${POSTGRES_VERSIONS.map((v) => v.major).join(", ")}`);
  }
  return version.includes(".") && entry.version !== "machine" ? { ...entry, version } : entry;
}
