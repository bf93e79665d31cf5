import { str, url } from "envalid";
import type { EngineSink } from "@tether/search-sink";

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

/** Resolves the chosen sink and its URL; a clear error names the variable that is missing. */
export function sinkSetting(env: { TETHER_SINK?: string; ELASTICSEARCH_URL?: string | undefined; OPENSEARCH_URL?: string | undefined }): SinkSetting {
  const kind = (env.TETHER_SINK || "elasticsearch") as SinkKind;
  if (!SINK_KINDS.includes(kind)) throw new Error(`TETHER_SINK: must be one of ${SINK_KINDS.join(", ")} (got "${kind}")`);
  const variable = kind === "opensearch" ? "OPENSEARCH_URL" : "ELASTICSEARCH_URL";
  const value = env[variable];
  if (!value) throw new Error(`${variable}: required when TETHER_SINK=${kind}`);
  return { kind, url: value };
}

/**
 * Builds the sink a process was configured with. Only the chosen engine's client is loaded: a
 * process starts no slower for the sink it does not use.
 *
 * @example
 * const sink = await createSink(sinkSetting(env), { indexPrefix: env.TETHER_INDEX_PREFIX });
 */
export async function createSink(setting: SinkSetting, opts: { indexPrefix?: string } = {}): Promise<EngineSink> {
  if (setting.kind === "opensearch") return (await import("@tether/opensearch")).opensearch({ node: setting.url, ...opts });
  return (await import("@tether/elasticsearch")).elasticsearch({ node: setting.url, ...opts });
}
