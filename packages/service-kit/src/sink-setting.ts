import { str, url } from "envalid";
import { sinkEnvironment, type SinkKind } from "@tether/core";
import { SINK_KINDS } from "@tether/core/internal";

export { SINK_KINDS, type SinkKind };

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
 * Resolves the chosen sink and its URL (core's `sinkEnvironment`, the one reading every process
 * shares); a clear error names the variable that is missing. The process hands `url` to its
 * config's sink factory (`elasticsearch()` or `opensearch()`).
 */
export function sinkSetting(env: { TETHER_SINK?: string; ELASTICSEARCH_URL?: string | undefined; OPENSEARCH_URL?: string | undefined }): SinkSetting {
  let read;
  try {
    read = sinkEnvironment(env);
  } catch {
    throw new Error(`TETHER_SINK: must be one of ${SINK_KINDS.join(", ")} (got "${env.TETHER_SINK ?? ""}")`);
  }
  if (!read.url) throw new Error(`${read.urlVariable}: required when TETHER_SINK=${read.kind}`);
  return { kind: read.kind, url: read.url };
}
