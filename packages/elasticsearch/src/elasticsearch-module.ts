import { createRequire } from "node:module";
import type * as Elasticsearch from "@elastic/elasticsearch";

const requireHere = createRequire(import.meta.url);
let loaded: typeof Elasticsearch | undefined;

/**
 * The Elasticsearch client's module, loaded the first time a sink or an error check needs it
 * rather than when this package is imported: a config that names both engines (`TETHER_SINK`
 * picking one) loads only the client it builds, which is most of a `tether` verb's start-up.
 */
export function elasticsearchModule(): typeof Elasticsearch {
  return (loaded ??= requireHere("@elastic/elasticsearch") as typeof Elasticsearch);
}
