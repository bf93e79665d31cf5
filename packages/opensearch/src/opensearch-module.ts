import { createRequire } from "node:module";
import type * as OpenSearch from "@opensearch-project/opensearch";

const requireHere = createRequire(import.meta.url);
let loaded: typeof OpenSearch | undefined;

/**
 * The OpenSearch client's module, loaded the first time a sink needs it rather than when this
 * package is imported: a config that names both engines (`TETHER_SINK` picking one) loads only
 * the client it builds, which is most of a `tether` verb's start-up.
 */
export function openSearchModule(): typeof OpenSearch {
  return (loaded ??= requireHere("@opensearch-project/opensearch") as typeof OpenSearch);
}
