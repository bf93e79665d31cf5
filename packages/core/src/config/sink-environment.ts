import { ConfigError } from "./config-error.js";
import { CONNECTION_FIELDS, connectionVariables, type ConnectionEnvironment } from "./connection-fields.js";
import type { SinkEnvironment } from "./tether-config.js";

/** The downstream engines a process may be pointed at with TETHER_SINK. */
export const SINK_KINDS = ["elasticsearch", "opensearch"] as const;
export type SinkKind = (typeof SINK_KINDS)[number];

/** The variables that name each engine's node URL. */
export const SINK_URL_VARIABLES: Readonly<Record<SinkKind, string>> = { elasticsearch: "ELASTICSEARCH_URL", opensearch: "OPENSEARCH_URL" };

/** What `sinkEnvironment` read: the environment handed to the config's sink factory, and which engine it names. */
export interface ProcessSinkEnvironment extends SinkEnvironment {
  kind: SinkKind;
  /** The variable the URL comes from (ELASTICSEARCH_URL or OPENSEARCH_URL). */
  urlVariable: string;
  indexPrefix: string;
}

/**
 * The one reading of a process's environment for its sink, shared by the CLI, the drainer and
 * the application's own processes: TETHER_SINK (`elasticsearch`, the default, or `opensearch`)
 * picks ELASTICSEARCH_URL or OPENSEARCH_URL and the engine's other connection variables
 * (`ELASTICSEARCH_API_KEY`, `OPENSEARCH_AWS_REGION`, …: `connectionVariables`, decided with the
 * config's factory options by `resolveConnection`); TETHER_INDEX_PREFIX (default "") is
 * prepended to every index name. The package never reads `process.env` itself: the process hands it over.
 * Throws `ConfigError` on an unknown TETHER_SINK.
 *
 * @example
 * const sink = config.sink(sinkEnvironment(process.env));
 */
export function sinkEnvironment(env: Readonly<Record<string, string | undefined>>): ProcessSinkEnvironment {
  const kind = (env.TETHER_SINK || "elasticsearch") as SinkKind;
  if (!SINK_KINDS.includes(kind)) throw new ConfigError("environment", "TETHER_SINK", `must be one of ${SINK_KINDS.join(", ")} (got "${kind}")`);
  const urlVariable = SINK_URL_VARIABLES[kind];
  const url = env[urlVariable] || undefined;
  const connection: ConnectionEnvironment = {};
  const variables = connectionVariables(kind);
  for (const field of CONNECTION_FIELDS) {
    const variable = variables[field];
    const value = variable ? env[variable] : undefined;
    if (variable && value) connection[field] = { variable, value };
  }
  return { kind, urlVariable, ...(url ? { url } : {}), indexPrefix: env.TETHER_INDEX_PREFIX ?? "", connection };
}
