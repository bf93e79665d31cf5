import { str, url } from "envalid";

export const SINK_KINDS = ["elasticsearch", "opensearch"] as const;
export type SinkKind = (typeof SINK_KINDS)[number];

/** The envalid specs of the sink settings every process shares. */
export const sinkEnvSpecs = {
  /** Which downstream: "elasticsearch" (default) or "opensearch". */
  TETHER_SINK: str({ default: "elasticsearch", choices: SINK_KINDS, desc: "the downstream: elasticsearch | opensearch" }),
  ELASTICSEARCH_URL: url({ default: undefined, desc: "Elasticsearch node URL (TETHER_SINK=elasticsearch)" }),
  OPENSEARCH_URL: url({ default: undefined, desc: "OpenSearch node URL (TETHER_SINK=opensearch)" }),
};

export interface SinkSetting {
  kind: SinkKind;
  /** The node URL of the chosen engine. */
  url: string;
}

/**
 * Resolves the chosen sink and its URL; a clear error names the variable that is missing. The
 * process hands `url` to its config's sink factory (`elasticsearch()` or `opensearch()`).
 */
export function sinkSetting(env: { TETHER_SINK?: string; ELASTICSEARCH_URL?: string | undefined; OPENSEARCH_URL?: string | undefined }): SinkSetting {
  const kind = (env.TETHER_SINK || "elasticsearch") as SinkKind;
  if (!SINK_KINDS.includes(kind)) throw new Error(`TETHER_SINK: must be one of ${SINK_KINDS.join(", ")} (got "${kind}")`);
  const variable = kind === "opensearch" ? "OPENSEARCH_URL" : "ELASTICSEARCH_URL";
  const value = env[variable];
  if (!value) throw new Error(`${variable}: required when TETHER_SINK=${kind}`);
  return { kind, url: value };
}
